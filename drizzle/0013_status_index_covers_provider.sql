CREATE INDEX "webhook_inbox_status_received_at_provider_idx" ON "webhook_inbox" USING btree ("status","received_at","provider");--> statement-breakpoint
DROP INDEX "webhook_inbox_status_received_at_idx";
