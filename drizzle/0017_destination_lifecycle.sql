CREATE TABLE "delivery_destination_retirements" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"destination" varchar(30) NOT NULL,
	"retired_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_by" text NOT NULL,
	"reason" text NOT NULL,
	"lanes_cleared" integer NOT NULL,
	"parked_lanes_cleared" integer NOT NULL,
	"jobs_cleared" integer NOT NULL
);
--> statement-breakpoint
DROP INDEX "delivery_lanes_failing_idx";--> statement-breakpoint
ALTER TABLE "delivery_destinations" ADD COLUMN "starts_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "delivery_destinations" ADD COLUMN "start_setting" text;--> statement-breakpoint
ALTER TABLE "delivery_destinations" ADD COLUMN "seed_after_payment_id" bigint;--> statement-breakpoint
ALTER TABLE "delivery_lanes" ADD COLUMN "answered_sequence" integer;--> statement-breakpoint
ALTER TABLE "delivery_lanes" ADD COLUMN "throttles" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "delivery_lanes" ADD COLUMN "throttled_since" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "delivery_lanes_failing_idx" ON "delivery_lanes" USING btree ("destination") WHERE ("delivery_lanes"."attempts" > 0 or "delivery_lanes"."throttles" > 0) and "delivery_lanes"."parked_at" is null;