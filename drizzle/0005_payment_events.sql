CREATE TABLE "payment_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"position" bigserial NOT NULL,
	"txid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"payment_id" bigint NOT NULL,
	"sequence" integer NOT NULL,
	"provider" varchar(30) NOT NULL,
	"gateway_charge_id" varchar(150) NOT NULL,
	"status" varchar(20) NOT NULL,
	"previous_status" varchar(20),
	"amount" bigint,
	"amount_refunded" bigint NOT NULL,
	"currency" varchar(3),
	"occurred_at" timestamp with time zone NOT NULL,
	"cause_inbox_id" bigint NOT NULL,
	"cause_event_id" varchar(150) NOT NULL,
	"cause_event_type" varchar(80) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "event_sequence" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payment_events" ADD CONSTRAINT "payment_events_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_events_payment_id_sequence_key" ON "payment_events" USING btree ("payment_id","sequence");--> statement-breakpoint
CREATE INDEX "payment_events_txid_position_idx" ON "payment_events" USING btree ("txid","position");