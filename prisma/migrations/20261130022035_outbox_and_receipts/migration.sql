-- CreateTable
CREATE TABLE "outbox" (
    "id" SERIAL NOT NULL,
    "topic" VARCHAR(64) NOT NULL,
    "key" VARCHAR(64) NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    "stream_id" VARCHAR(32),

    CONSTRAINT "outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receipts" (
    "id" SERIAL NOT NULL,
    "order_no" VARCHAR(64) NOT NULL,
    "charge_id" VARCHAR(64) NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "consumer" VARCHAR(64) NOT NULL,
    "sent_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outbox_published_at_id_idx" ON "outbox"("published_at", "id");

-- CreateIndex
CREATE INDEX "receipts_order_no_idx" ON "receipts"("order_no");
