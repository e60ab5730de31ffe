-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "fence" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "unknown_since" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "idempotent_record" ADD COLUMN     "claimed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "fence" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "unknown_since" TIMESTAMPTZ(3),
ALTER COLUMN "owner" DROP NOT NULL;

-- AlterTable
ALTER TABLE "bank_charges" ADD COLUMN     "fence_lock" VARCHAR(512),
ADD COLUMN     "idempotency_key" VARCHAR(128);

-- CreateTable
CREATE TABLE "bank_fences" (
    "lock" VARCHAR(512) NOT NULL,
    "token" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_fences_pkey" PRIMARY KEY ("lock")
);

-- CreateIndex
CREATE UNIQUE INDEX "bank_charges_idempotency_key_key" ON "bank_charges"("idempotency_key");
