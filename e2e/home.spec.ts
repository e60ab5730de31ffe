import { CheckoutPage, expect, test } from './fixtures';

test('the home page starts a checkout that shows the new order', async ({ page, db }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1 })).toContainText('cannot charge a card twice');
  await page.getByRole('button', { name: 'Start a checkout' }).click();

  await expect(page).toHaveURL(/\/checkout\/ord_[0-9a-z]{16}$/);
  const orderNo = page.url().split('/').pop() ?? '';
  const checkout = new CheckoutPage(page);
  await expect(page.getByRole('heading', { name: 'Order summary' })).toBeVisible();
  await expect(page.getByText(orderNo)).toBeVisible();
  await expect(checkout.payButton).toHaveAccessibleName('Pay $42.00');
  await expect(checkout.status).toHaveText('PENDING');

  const { rows } = await db.query('SELECT status, amount_cents FROM orders WHERE order_no = $1', [orderNo]);
  expect(rows).toEqual([{ status: 'PENDING', amount_cents: 4200 }]);
});

test('an unknown order is a 404 page', async ({ page }) => {
  const response = await page.goto('/checkout/ord_0000000000000000');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
});
