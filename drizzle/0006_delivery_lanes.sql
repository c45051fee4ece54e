CREATE TABLE "delivery_destinations" (
	"name" varchar(30) PRIMARY KEY NOT NULL,
	"disabled_at" timestamp with time zone,
	"disabled_reason" text,
	"backoff_until" timestamp with time zone,
	"backoff_trips" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "delivery_lanes" (
	"destination" varchar(30) NOT NULL,
	"payment_id" bigint NOT NULL,
	"delivered_sequence" integer DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"parked_at" timestamp with time zone,
	"parked_reason" text,
	"last_attempt_at" timestamp with time zone,
	"last_status" smallint,
	"last_error" text,
	"skipped_events" integer DEFAULT 0 NOT NULL,
	"last_skip_reason" text,
	"last_skipped_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "delivery_lanes_destination_payment_id_pk" PRIMARY KEY("destination","payment_id")
);
--> statement-breakpoint
ALTER TABLE "delivery_lanes" ADD CONSTRAINT "delivery_lanes_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "delivery_lanes_parked_idx" ON "delivery_lanes" USING btree ("destination") WHERE "delivery_lanes"."parked_at" is not null;--> statement-breakpoint
CREATE INDEX "delivery_lanes_failing_idx" ON "delivery_lanes" USING btree ("destination") WHERE "delivery_lanes"."attempts" > 0 and "delivery_lanes"."parked_at" is null;