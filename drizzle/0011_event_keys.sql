CREATE TABLE "webhook_event_keys" (
	"provider" varchar(30) NOT NULL,
	"event_id" varchar(150) NOT NULL,
	"fingerprint" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_event_keys_pkey" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
CREATE INDEX "webhook_event_keys_provider_received_at_idx" ON "webhook_event_keys" USING btree ("provider","received_at");--> statement-breakpoint
-- Hand-written: every stored event's key, so deduplication (which now goes through this table)
-- knows every event received before the upgrade.
INSERT INTO "webhook_event_keys" ("provider", "event_id", "fingerprint", "received_at")
SELECT "provider", "event_id", "fingerprint", "received_at" FROM "webhook_inbox"
ON CONFLICT DO NOTHING;
