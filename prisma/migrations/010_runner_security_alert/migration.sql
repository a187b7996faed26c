-- AlterTable
ALTER TABLE "Runner" ADD COLUMN "instanceId" TEXT;
ALTER TABLE "Runner" ADD COLUMN "securityAlert" TEXT;
ALTER TABLE "Runner" ADD COLUMN "securityAlertAt" DATETIME;

