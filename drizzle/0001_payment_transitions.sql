CREATE TABLE "payment_transitions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payment_id" bigint NOT NULL,
	"inbox_id" bigint NOT NULL,
	"from_status" varchar(20),
	"to_status" varchar(20) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "initial_status" varchar(20);--> statement-breakpoint
ALTER TABLE "payment_transitions" ADD CONSTRAINT "payment_transitions_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_transitions_payment_id_idx" ON "payment_transitions" USING btree ("payment_id","id");--> statement-breakpoint
CREATE INDEX "payment_transitions_inbox_id_idx" ON "payment_transitions" USING btree ("inbox_id");--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_initial_status_check" CHECK ("payments"."initial_status" is null or "payments"."initial_status" in ('pending', 'paid', 'failed', 'canceled', 'refunded', 'partially_refunded', 'disputed', 'charged_back'));