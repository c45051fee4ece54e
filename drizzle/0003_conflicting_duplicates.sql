CREATE TABLE "webhook_inbox_conflicts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"inbox_id" bigint NOT NULL,
	"provider" varchar(30) NOT NULL,
	"event_id" varchar(150) NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"fingerprint" text NOT NULL,
	"differences" jsonb NOT NULL,
	"raw_body" "bytea" NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_inbox" ADD COLUMN "fingerprint" text;--> statement-breakpoint
ALTER TABLE "webhook_inbox_conflicts" ADD CONSTRAINT "webhook_inbox_conflicts_inbox_id_webhook_inbox_id_fk" FOREIGN KEY ("inbox_id") REFERENCES "public"."webhook_inbox"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_inbox_conflicts_inbox_id_idx" ON "webhook_inbox_conflicts" USING btree ("inbox_id");--> statement-breakpoint
CREATE INDEX "webhook_inbox_conflicts_received_at_idx" ON "webhook_inbox_conflicts" USING btree ("received_at");