-- An order's number says whether it was made without settings of its own (`ord_u…`, a letter base32 never writes:
-- lib/payments/order-no.ts). A service's payment of such an order runs under the global lab without reading the
-- order (decision 036), so such an order must never have settings: given at its creation, or written into its row
-- later, they would be ignored. The database refuses them.
ALTER TABLE "orders" ADD CONSTRAINT "orders_numbered_without_settings" CHECK ("lab" IS NULL OR left("order_no", 5) <> 'ord_u');
