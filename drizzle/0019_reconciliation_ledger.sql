CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"entry_id" varchar(150) NOT NULL,
	"kind" varchar(20) NOT NULL,
	"gateway_type" varchar(60) NOT NULL,
	"charge_id" varchar(150),
	"payment_key" varchar(150),
	"payout_id" varchar(150),
	"amount" bigint NOT NULL,
	"fee" bigint NOT NULL,
	"net" bigint NOT NULL,
	"currency" varchar(3) NOT NULL,
	"status" varchar(30),
	"available_at" timestamp with time zone,
	"gateway_created_at" timestamp with time zone NOT NULL,
	"raw" jsonb NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ledger_entries_kind_check" CHECK ("ledger_entries"."kind" in ('charge', 'refund', 'chargeback', 'chargeback_reversal', 'fee', 'payout', 'other'))
);
--> statement-breakpoint
CREATE TABLE "ledger_payouts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"payout_id" varchar(150) NOT NULL,
	"amount" bigint NOT NULL,
	"currency" varchar(3) NOT NULL,
	"status" varchar(30) NOT NULL,
	"arrival_at" timestamp with time zone,
	"balance_entry_id" varchar(150),
	"gateway_created_at" timestamp with time zone NOT NULL,
	"raw" jsonb NOT NULL,
	"entries_read_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "reconciliation_findings" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"kind" varchar(40) NOT NULL,
	"subject" varchar(150) NOT NULL,
	"payment_id" bigint,
	"status" varchar(10) DEFAULT 'open' NOT NULL,
	"evidence" jsonb NOT NULL,
	"first_run_id" bigint NOT NULL,
	"last_run_id" bigint NOT NULL,
	"first_found_at" timestamp with time zone NOT NULL,
	"last_found_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "reconciliation_findings_kind_check" CHECK ("reconciliation_findings"."kind" in ('missing_credit', 'credit_without_payment', 'amount_mismatch', 'refund_not_on_payment', 'refund_not_in_ledger', 'chargeback_not_on_payment', 'chargeback_not_in_ledger', 'payout_mismatch', 'unreadable_entry')),
	CONSTRAINT "reconciliation_findings_status_check" CHECK ("reconciliation_findings"."status" in ('open', 'resolved'))
);
--> statement-breakpoint
CREATE TABLE "reconciliation_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"scope" varchar(10) NOT NULL,
	"payout_id" varchar(150),
	"since" timestamp with time zone NOT NULL,
	"until" timestamp with time zone NOT NULL,
	"status" varchar(10) NOT NULL,
	"cursor" text,
	"pages" integer DEFAULT 0 NOT NULL,
	"entries_read" integer DEFAULT 0 NOT NULL,
	"entries_new" integer DEFAULT 0 NOT NULL,
	"unreadable" integer DEFAULT 0 NOT NULL,
	"findings" integer DEFAULT 0 NOT NULL,
	"error" text,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"resumed_run_id" bigint,
	CONSTRAINT "reconciliation_runs_status_check" CHECK ("reconciliation_runs"."status" in ('running', 'complete', 'partial'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_provider_entry_id_key" ON "ledger_entries" USING btree ("provider","entry_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_provider_charge_id_idx" ON "ledger_entries" USING btree ("provider","charge_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_provider_payment_key_idx" ON "ledger_entries" USING btree ("provider","payment_key");--> statement-breakpoint
CREATE INDEX "ledger_entries_provider_payout_id_idx" ON "ledger_entries" USING btree ("provider","payout_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_provider_created_idx" ON "ledger_entries" USING btree ("provider","gateway_created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_payouts_provider_payout_id_key" ON "ledger_payouts" USING btree ("provider","payout_id");--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliation_findings_provider_kind_subject_key" ON "reconciliation_findings" USING btree ("provider","kind","subject");--> statement-breakpoint
CREATE INDEX "reconciliation_findings_status_idx" ON "reconciliation_findings" USING btree ("status","provider");--> statement-breakpoint
CREATE INDEX "reconciliation_findings_payment_id_idx" ON "reconciliation_findings" USING btree ("payment_id");--> statement-breakpoint
CREATE INDEX "reconciliation_runs_provider_scope_idx" ON "reconciliation_runs" USING btree ("provider","scope","id");