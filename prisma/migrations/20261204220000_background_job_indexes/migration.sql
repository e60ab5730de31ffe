-- The background jobs read only what is due or in doubt, however many rows the tables hold (issue 30, held by
-- test/scale/background-jobs.int.test.ts, which counts the rows each job reads on 100,000 settled orders).

-- Retention walks the orders oldest first and stops at the first that is not due.
CREATE INDEX "orders_created_at_idx" ON "orders"("created_at");

-- Retention's fencing tokens nobody raised since the cutoff.
CREATE INDEX "bank_fences_updated_at_idx" ON "bank_fences"("updated_at");

-- Retention's relayed events (those not relayed yet are the relay's, by "outbox_published_at_id_idx").
-- Partial: not expressible in schema.prisma, which a diff of two schema files leaves alone.
CREATE INDEX "outbox_relayed_created_at_idx" ON "outbox"("created_at") WHERE "published_at" IS NOT NULL;

-- The reconciler's dedup rows in doubt (no outcome yet) of payments and refunds: a handful, among millions
-- settled. A receipt's row never has an outcome (its unique key is all it needs), so it is left out. Partial,
-- as above.
CREATE INDEX "idempotent_record_in_doubt_idx" ON "idempotent_record"("biz_type", "claimed_at")
  WHERE "outcome" IS NULL AND "biz_type" IN ('PAYMENT', 'REFUND');

-- A refund's reference is `<order no>/<refund key>`, and the reconciler finds a refund by the part before the first
-- slash (by its key, not by a concatenation no index has): an order number never has one (ord_ and 16 letters or
-- digits, by the API), and the database says so too.
ALTER TABLE "orders" ADD CONSTRAINT "orders_order_no_has_no_slash" CHECK (position('/' in "order_no") = 0);
