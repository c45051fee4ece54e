ALTER TABLE "webhook_inbox" DROP CONSTRAINT "webhook_inbox_decision_check";--> statement-breakpoint
-- The column unqualified (edited by hand; the snapshot keeps drizzle-kit's text, so a later generate
-- sees no change): webhook_inbox is partitioned, and PostgreSQL checks the expression again on each
-- partition, where "webhook_inbox"."decision" names no table in scope.
ALTER TABLE "webhook_inbox" ADD CONSTRAINT "webhook_inbox_decision_check" CHECK ("decision" in ('applied', 'stale', 'rejected_transition', 'rejected_amount', 'superseded', 'refetched', 'not_a_payment_event', 'unknown_payment'));--> statement-breakpoint
-- NOT VALID (added by hand to drizzle-kit's output): every write from now on is checked, but a row an
-- earlier version stored with more refunded than its amount does not stop the service from starting.
-- Its next event refolds it into a possible payment; `ALTER TABLE payments VALIDATE CONSTRAINT
-- payments_amount_refunded_check` then confirms none is left.
ALTER TABLE "payments" ADD CONSTRAINT "payments_amount_refunded_check" CHECK ("payments"."amount_refunded" >= 0 and ("payments"."amount" is null or "payments"."amount_refunded" <= "payments"."amount")) NOT VALID;