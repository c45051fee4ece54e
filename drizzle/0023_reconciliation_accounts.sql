ALTER TABLE "ledger_entries" ADD COLUMN "account" varchar(150);--> statement-breakpoint
ALTER TABLE "reconciliation_findings" ADD COLUMN "account" varchar(150);--> statement-breakpoint
ALTER TABLE "reconciliation_runs" ADD COLUMN "account" varchar(150);