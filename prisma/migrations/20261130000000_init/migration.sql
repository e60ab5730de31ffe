-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "payment_status" AS ENUM ('PENDING', 'PROCESSING', 'PAID', 'DECLINED', 'UNKNOWN');

-- CreateTable
CREATE TABLE "orders" (
    "order_no" VARCHAR(64) NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "status" "payment_status" NOT NULL DEFAULT 'PENDING',
    "attempt_id" VARCHAR(64),
    "claimed_at" TIMESTAMPTZ(3),
    "charge_id" VARCHAR(64),
    "paid_at" TIMESTAMPTZ(3),
    "decline_reason" VARCHAR(200),
    "lab" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("order_no")
);

-- CreateTable
CREATE TABLE "idempotent_record" (
    "id" SERIAL NOT NULL,
    "biz_type" VARCHAR(32) NOT NULL,
    "biz_no" VARCHAR(64) NOT NULL,
    "owner" VARCHAR(64) NOT NULL,
    "outcome" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotent_record_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "bank_charges" (
    "id" VARCHAR(64) NOT NULL,
    "merchant_ref" VARCHAR(64) NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_charges_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "orders_status_claimed_at_idx" ON "orders"("status", "claimed_at");

-- CreateIndex
CREATE UNIQUE INDEX "uk_biz" ON "idempotent_record"("biz_type", "biz_no");

-- CreateIndex
CREATE INDEX "bank_charges_merchant_ref_idx" ON "bank_charges"("merchant_ref");
