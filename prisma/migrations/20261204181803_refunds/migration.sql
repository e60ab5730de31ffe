-- CreateEnum
CREATE TYPE "refund_status" AS ENUM ('REQUESTED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'UNKNOWN');

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "refunded_cents" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "idempotent_record" ALTER COLUMN "biz_no" SET DATA TYPE VARCHAR(400);

-- CreateTable
CREATE TABLE "refunds" (
    "order_no" VARCHAR(64) NOT NULL,
    "refund_key" VARCHAR(300) NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "status" "refund_status" NOT NULL DEFAULT 'REQUESTED',
    "attempt_id" VARCHAR(64),
    "claimed_at" TIMESTAMPTZ(3),
    "fence" INTEGER NOT NULL DEFAULT 0,
    "first_fence" INTEGER,
    "unknown_since" TIMESTAMPTZ(3),
    "reserved" BOOLEAN NOT NULL DEFAULT false,
    "bank_refund_id" VARCHAR(64),
    "refunded_at" TIMESTAMPTZ(3),
    "failure_reason" VARCHAR(200),
    "caller" VARCHAR(80),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("order_no","refund_key")
);

-- CreateTable
CREATE TABLE "refund_requests" (
    "id" VARCHAR(64) NOT NULL,
    "order_no" VARCHAR(64) NOT NULL,
    "opened_by" VARCHAR(80) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "refund_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bank_refunds" (
    "id" VARCHAR(64) NOT NULL,
    "charge_id" VARCHAR(64) NOT NULL,
    "merchant_ref" VARCHAR(400) NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "idempotency_key" VARCHAR(400),
    "fence_lock" VARCHAR(512),

    CONSTRAINT "bank_refunds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "refunds_status_claimed_at_idx" ON "refunds"("status", "claimed_at");

-- CreateIndex
CREATE INDEX "refund_requests_order_no_idx" ON "refund_requests"("order_no");

-- CreateIndex
CREATE UNIQUE INDEX "bank_refunds_idempotency_key_key" ON "bank_refunds"("idempotency_key");

-- CreateIndex
CREATE INDEX "bank_refunds_charge_id_idx" ON "bank_refunds"("charge_id");

-- CreateIndex
CREATE INDEX "bank_refunds_merchant_ref_idx" ON "bank_refunds"("merchant_ref");

-- CreateIndex
CREATE INDEX "bank_refunds_created_at_idx" ON "bank_refunds"("created_at");

-- The refunds' ledger: whatever got through the layers above, the database refuses to let the amount refunded (or
-- claimed for a refund) pass the order's amount, or go below zero. The last millimetre for refunds.
ALTER TABLE "orders" ADD CONSTRAINT "orders_refunded_within_amount"
  CHECK ("refunded_cents" >= 0 AND "refunded_cents" <= "amount_cents");

-- A refund gives money back: never a negative amount, neither the merchant's nor the bank's.
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_amount_positive" CHECK ("amount_cents" > 0);
ALTER TABLE "bank_refunds" ADD CONSTRAINT "bank_refunds_amount_positive" CHECK ("amount_cents" > 0);
