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

test('/scenarios shows the proof matrix and the key-strategy matrix, as declared', async ({ page }) => {
  await page.goto('/scenarios');
  const proof = page.getByRole('table', { name: 'Which defence stops which duplicate' });
  await expect(proof.getByRole('columnheader', { name: '2 Request key only' })).toBeVisible();
  const keys = page.getByRole('table', { name: 'Key strategies: what layer 2’s key is made of' });
  for (const column of ['Business identity', 'Hash of the parameters', 'New key per submit']) {
    await expect(keys.getByRole('columnheader', { name: column })).toBeVisible();
  }
  await expect(keys.locator('tbody tr')).toHaveCount(6);
  // The committed results (a clean checkout; a local run of a few scenarios shows those instead): under the
  // hash, only the byte-identical resend is one charge.
  if (!(await page.getByText('From the results committed in docs/scenario-matrix.json').isVisible())) return;
  const doubleClick = keys.getByRole('row', { name: /Double click in one tab/ });
  await expect(doubleClick.getByRole('cell')).toHaveText([/1 charge/, /2 charges/, /2 charges/]);
  const resend = keys.getByRole('row', { name: /byte for byte/ });
  await expect(resend.getByRole('cell')).toHaveText([/1 charge/, /1 charge/, /2 charges/]);
});
