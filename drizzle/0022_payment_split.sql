ALTER TABLE "payment_events" ADD COLUMN "split" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "split" jsonb;