ALTER TABLE "payment_events" ADD COLUMN "inquiry_open" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "inquiry_open" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "status_before_dispute" varchar(20);--> statement-breakpoint
-- NOT VALID (added by hand to drizzle-kit's output): the column is new, so every row already there
-- holds null and passes; validating would only scan the whole payments table under the lock.
ALTER TABLE "payments" ADD CONSTRAINT "payments_status_before_dispute_check" CHECK ("payments"."status_before_dispute" is null or "payments"."status_before_dispute" in ('pending', 'authorized', 'paid', 'failed', 'canceled', 'refunded', 'partially_refunded', 'disputed', 'charged_back')) NOT VALID;
