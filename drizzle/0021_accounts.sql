CREATE TABLE "gateway_account_access" (
	"provider" varchar(30) NOT NULL,
	"account" varchar(150) NOT NULL,
	"state" varchar(20) NOT NULL,
	"event_id" varchar(150) NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "gateway_account_access_pkey" PRIMARY KEY("provider","account"),
	CONSTRAINT "gateway_account_access_state_check" CHECK ("gateway_account_access"."state" in ('authorized', 'deauthorized'))
);
--> statement-breakpoint
ALTER TABLE "webhook_inbox" ADD COLUMN "account" varchar(150);--> statement-breakpoint
ALTER TABLE "payment_events" ADD COLUMN "account" varchar(150);--> statement-breakpoint
ALTER TABLE "payment_facts" ADD COLUMN "account" varchar(150);--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "account" varchar(150);--> statement-breakpoint
CREATE INDEX "webhook_inbox_account_id_idx" ON "webhook_inbox" USING btree ("account","id") WHERE "webhook_inbox"."account" is not null;--> statement-breakpoint
CREATE INDEX "payment_events_account_txid_position_idx" ON "payment_events" USING btree ("account","txid","position") WHERE "payment_events"."account" is not null;--> statement-breakpoint
CREATE INDEX "payments_account_idx" ON "payments" USING btree ("account") WHERE "payments"."account" is not null;--> statement-breakpoint
-- Hand-written (drizzle-kit tracks no functions): the trigger of drizzle/0018_payment_facts.sql
-- now copies the event's account with its fact. Replaced in place, so the trigger itself and its
-- per-statement firing are unchanged; an instance still on the previous version settles rows with
-- account null, which is what they hold.
CREATE OR REPLACE FUNCTION "record_payment_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "payment_facts" AS f ("provider", "event_id", "inbox_id", "event_type", "payment_key", "legacy_key", "account", "occurred_at", "fact", "decision", "decision_detail", "recorded_at")
  SELECT s."provider", s."event_id", s."id", s."event_type", s."fact"->>'chargeId', s."fact"->>'legacyChargeId', s."account", s."occurred_at", s."fact", s."decision", s."decision_detail", now()
  FROM "settled" s
  WHERE s."status" IN ('processed', 'ignored') AND jsonb_typeof(s."fact"->'chargeId') = 'string'
  ORDER BY s."provider", s."event_id"
  ON CONFLICT ("provider", "event_id") DO UPDATE SET
    "inbox_id" = EXCLUDED."inbox_id", "event_type" = EXCLUDED."event_type", "payment_key" = EXCLUDED."payment_key", "legacy_key" = EXCLUDED."legacy_key",
    "account" = EXCLUDED."account", "occurred_at" = EXCLUDED."occurred_at", "fact" = EXCLUDED."fact", "decision" = EXCLUDED."decision",
    "decision_detail" = EXCLUDED."decision_detail", "recorded_at" = EXCLUDED."recorded_at";
  RETURN NULL;
END
$$;
