CREATE TABLE "payment_facts" (
	"provider" varchar(30) NOT NULL,
	"event_id" varchar(150) NOT NULL,
	"inbox_id" bigint NOT NULL,
	"event_type" varchar(80) NOT NULL,
	"payment_key" varchar(150) NOT NULL,
	"legacy_key" varchar(150),
	"occurred_at" timestamp with time zone NOT NULL,
	"fact" jsonb NOT NULL,
	"decision" text,
	"decision_detail" jsonb,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_facts_pkey" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
CREATE TABLE "payment_facts_carry_over" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"target_inbox_id" bigint NOT NULL,
	"carried_through_inbox_id" bigint DEFAULT 0 NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "payment_facts_carry_over_one_row" CHECK ("payment_facts_carry_over"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "checkpoint" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "checkpointed_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "payment_facts_provider_payment_key_idx" ON "payment_facts" USING btree ("provider","payment_key");--> statement-breakpoint
CREATE INDEX "payment_facts_provider_legacy_key_idx" ON "payment_facts" USING btree ("provider","legacy_key") WHERE "payment_facts"."legacy_key" is not null;--> statement-breakpoint
CREATE INDEX "payment_facts_provider_recorded_at_idx" ON "payment_facts" USING btree ("provider","recorded_at");
--> statement-breakpoint
-- Hand-written from here (drizzle-kit cannot express triggers or data; its snapshot does not track
-- them, so a later generate leaves them alone). Every settled event's payment fact is kept in
-- payment_facts by the database itself, in the statement that settles the inbox row with it
-- (markEventOutcomes sets fact, decision and status in one UPDATE): whichever version of the
-- service settles it. During a rolling deploy the instances still on the previous version write
-- only webhook_inbox.fact; this trigger puts their facts where the new version's fold reads them.
-- Per statement, over the rows it updated (all partitions'): one INSERT for a whole batch, where a
-- row trigger cost a function call and an INSERT per event. Only UPDATEs that leave a row settled
-- with a payment fact (a chargeId) copy anything: every other UPDATE of webhook_inbox touches
-- pending rows, a replay's reset clears the fact, a custom handler's fact is not this table's. A
-- restore INSERTs rows: it fires nothing, so facts are neither duplicated nor revived by it. In
-- key order, as the carry-over inserts: the two never wait on each other crosswise.
CREATE FUNCTION "record_payment_facts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "payment_facts" AS f ("provider", "event_id", "inbox_id", "event_type", "payment_key", "legacy_key", "occurred_at", "fact", "decision", "decision_detail", "recorded_at")
  SELECT s."provider", s."event_id", s."id", s."event_type", s."fact"->>'chargeId', s."fact"->>'legacyChargeId', s."occurred_at", s."fact", s."decision", s."decision_detail", now()
  FROM "settled" s
  WHERE s."status" IN ('processed', 'ignored') AND jsonb_typeof(s."fact"->'chargeId') = 'string'
  ORDER BY s."provider", s."event_id"
  ON CONFLICT ("provider", "event_id") DO UPDATE SET
    "inbox_id" = EXCLUDED."inbox_id", "event_type" = EXCLUDED."event_type", "payment_key" = EXCLUDED."payment_key", "legacy_key" = EXCLUDED."legacy_key",
    "occurred_at" = EXCLUDED."occurred_at", "fact" = EXCLUDED."fact", "decision" = EXCLUDED."decision", "decision_detail" = EXCLUDED."decision_detail",
    "recorded_at" = EXCLUDED."recorded_at";
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "webhook_inbox_records_payment_facts" AFTER UPDATE ON "webhook_inbox" REFERENCING NEW TABLE AS "settled"
  FOR EACH STATEMENT EXECUTE FUNCTION "record_payment_facts"();
--> statement-breakpoint
-- The facts settled before the trigger existed are carried over in the background, in batches
-- (src/processing/fact-carry-over.ts), up to the newest row stored now: CREATE TRIGGER waited for
-- every transaction writing webhook_inbox and holds writers off until COMMIT, so every row settled
-- without the trigger has an id up to this one. A fresh install has none: nothing to carry.
INSERT INTO "payment_facts_carry_over" ("id", "target_inbox_id", "carried_through_inbox_id", "finished_at")
SELECT 1, coalesce(max("id"), 0), 0, CASE WHEN max("id") IS NULL THEN now() END FROM "webhook_inbox";
