CREATE TABLE "payments" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"gateway_charge_id" varchar(150) NOT NULL,
	"status" varchar(20) NOT NULL,
	"amount" bigint,
	"amount_refunded" bigint DEFAULT 0 NOT NULL,
	"currency" varchar(3),
	"last_gateway_event_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payments_status_check" CHECK ("payments"."status" in ('pending', 'paid', 'failed', 'canceled', 'refunded', 'partially_refunded', 'disputed', 'charged_back'))
);
--> statement-breakpoint
CREATE TABLE "webhook_inbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" varchar(30) NOT NULL,
	"event_id" varchar(150) NOT NULL,
	"event_type" varchar(80) NOT NULL,
	"resource_id" varchar(150),
	"payload" jsonb NOT NULL,
	"raw_body" "bytea" NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" varchar(10) DEFAULT 'pending' NOT NULL,
	"attempts" smallint DEFAULT 0 NOT NULL,
	"last_error" text,
	"processed_at" timestamp with time zone,
	CONSTRAINT "webhook_inbox_status_check" CHECK ("webhook_inbox"."status" in ('pending', 'processed', 'ignored', 'failed'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "payments_provider_gateway_charge_id_key" ON "payments" USING btree ("provider","gateway_charge_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_inbox_provider_event_id_key" ON "webhook_inbox" USING btree ("provider","event_id");--> statement-breakpoint
CREATE INDEX "webhook_inbox_status_received_at_idx" ON "webhook_inbox" USING btree ("status","received_at");--> statement-breakpoint
CREATE INDEX "webhook_inbox_provider_resource_id_idx" ON "webhook_inbox" USING btree ("provider","resource_id");