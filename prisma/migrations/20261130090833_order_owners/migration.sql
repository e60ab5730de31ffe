-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "join_code" VARCHAR(32),
ADD COLUMN     "owner" VARCHAR(80),
ADD COLUMN     "payers" VARCHAR(80)[] DEFAULT ARRAY[]::VARCHAR(80)[];
