-- Retention's refunds left without their order that no bank answered for (lib/payments/retention.ts,
-- pruneOrphanRefunds): it reads those older than the cutoff, oldest first, by this index, not every refund kept.
-- Partial: not expressible in schema.prisma, which a diff of two schema files leaves alone.
CREATE INDEX "refunds_unanswered_created_at_idx" ON "refunds"("created_at")
  WHERE "bank_refund_id" IS NULL AND "status" IN ('REQUESTED', 'PROCESSING', 'FAILED');
