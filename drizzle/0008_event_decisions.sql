ALTER TABLE "webhook_inbox" ADD COLUMN "decision" text;--> statement-breakpoint
ALTER TABLE "webhook_inbox" ADD COLUMN "decision_detail" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_inbox" ADD CONSTRAINT "webhook_inbox_decision_check" CHECK ("webhook_inbox"."decision" in ('applied', 'stale', 'rejected_transition', 'superseded', 'refetched', 'not_a_payment_event', 'unknown_payment'));