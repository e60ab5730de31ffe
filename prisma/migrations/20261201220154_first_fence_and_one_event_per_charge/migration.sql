-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "first_fence" INTEGER;

-- AlterTable
ALTER TABLE "idempotent_record" ADD COLUMN     "first_fence" INTEGER;

-- AlterTable
ALTER TABLE "outbox" ADD COLUMN     "charge_id" VARCHAR(64);

-- CreateIndex
CREATE INDEX "bank_charges_created_at_idx" ON "bank_charges"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "outbox_topic_charge_id_key" ON "outbox"("topic", "charge_id");
