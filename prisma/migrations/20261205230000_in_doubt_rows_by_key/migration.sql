-- The dedup rows in doubt, indexed by their key as well as their type. Keyed by (biz_type, claimed_at), the
-- index matched every statement that writes one payment's row "WHERE biz_type = 'PAYMENT' AND biz_no = $1 AND
-- outcome IS NULL" (recording an outcome, renewing, releasing a claim): its predicate is implied and it is the
-- smallest index, so the planner walked it by biz_type alone and filtered biz_no, reading every row in doubt and
-- every dead entry left since the last vacuum. Under load that was about 290 blocks per recorded payment, and
-- PostgreSQL's CPU per guarded payment was 1.2x the benchmark's ideal, whose statement has no outcome IS NULL
-- (decision 038). By (biz_type, biz_no) the same statements find their one entry, and the reconciler, which reads
-- every row in doubt of a type, still reads only those (test/scale/background-jobs.int.test.ts).
DROP INDEX "idempotent_record_in_doubt_idx";
CREATE INDEX "idempotent_record_in_doubt_idx" ON "idempotent_record"("biz_type", "biz_no")
  WHERE "outcome" IS NULL AND "biz_type" IN ('PAYMENT', 'REFUND');
