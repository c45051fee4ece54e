CREATE TABLE "dashboard_signed_out_sessions" (
	"nonce" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
