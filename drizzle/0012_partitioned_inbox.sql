-- Hand-written: drizzle-kit cannot express PARTITION BY. Its snapshot (meta/0012_snapshot.json)
-- describes the same end state (primary key (id, received_at), a plain (provider, event_id) index,
-- the conflicts' composite foreign key), so a later `drizzle-kit generate` sees nothing to do.
--
-- Takes an existing webhook_inbox over without losing a row or a job: the old table is renamed, a
-- partitioned table is built LIKE it (every column, default, check and comment, whoever added
-- them), each of its indexes is made again on the new one under its own name, the rows are copied
-- with their ids (pg-boss jobs carry only the id), and the id sequence is handed over. All in the
-- one transaction the migration runner opens, under an ACCESS EXCLUSIVE lock: deliveries wait (or
-- get 503 past COMMIT_DEADLINE_MS) for as long as the copy takes (README, Retention).
LOCK TABLE "webhook_inbox" IN ACCESS EXCLUSIVE MODE;
--> statement-breakpoint
ALTER TABLE "webhook_inbox_conflicts" DROP CONSTRAINT "webhook_inbox_conflicts_inbox_id_webhook_inbox_id_fk";
--> statement-breakpoint
DROP INDEX "webhook_inbox_conflicts_inbox_id_idx";
--> statement-breakpoint
ALTER TABLE "webhook_inbox" RENAME TO "webhook_inbox_unpartitioned";
--> statement-breakpoint
-- Index names are unique per schema: free them for the new table.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'webhook_inbox_unpartitioned'::regclass LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.relname, left(r.relname, 40) || '_unpartitioned');
  END LOOP;
END $$;
--> statement-breakpoint
CREATE TABLE "webhook_inbox" (LIKE "webhook_inbox_unpartitioned" INCLUDING ALL EXCLUDING INDEXES) PARTITION BY RANGE ("received_at");
--> statement-breakpoint
ALTER TABLE "webhook_inbox" ADD CONSTRAINT "webhook_inbox_pkey" PRIMARY KEY ("id", "received_at");
--> statement-breakpoint
ALTER SEQUENCE "webhook_inbox_id_seq" OWNED BY "webhook_inbox"."id";
--> statement-breakpoint
-- Every other index, as it was. A unique one cannot stay unique without received_at: it becomes a
-- plain index (`_key` → `_idx`); uniqueness of (provider, event_id) is webhook_event_keys' job.
DO $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT c.relname, i.indexrelid, i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE i.indrelid = 'webhook_inbox_unpartitioned'::regclass AND NOT i.indisprimary
  LOOP
    EXECUTE 'CREATE INDEX ' || quote_ident(regexp_replace(regexp_replace(r.relname, '_unpartitioned$', ''), CASE WHEN r.indisunique THEN '_key$' ELSE '^$' END, '_idx'))
      || ' ON "webhook_inbox"' || substring(pg_get_indexdef(r.indexrelid) from ' USING .*$');
  END LOOP;
END $$;
--> statement-breakpoint
-- A partition per month (UTC) that holds rows, and the current month and three ahead; a default
-- partition catches anything else, so an insert never fails for want of a partition.
-- src/db/inbox-partitions.ts keeps creating the months ahead (same names and bounds).
DO $$
DECLARE m timestamptz;
BEGIN
  FOR m IN
    SELECT DISTINCT date_trunc('month', received_at, 'UTC') FROM "webhook_inbox_unpartitioned"
    UNION
    SELECT date_trunc('month', now(), 'UTC') + make_interval(months => g) FROM generate_series(0, 3) g
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "webhook_inbox" FOR VALUES FROM (%L) TO (%L)',
      'webhook_inbox_p' || to_char(m AT TIME ZONE 'UTC', 'YYYY_MM'), m, (m AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC');
  END LOOP;
END $$;
--> statement-breakpoint
CREATE TABLE "webhook_inbox_default" PARTITION OF "webhook_inbox" DEFAULT;
--> statement-breakpoint
INSERT INTO "webhook_inbox" SELECT * FROM "webhook_inbox_unpartitioned";
--> statement-breakpoint
DROP TABLE "webhook_inbox_unpartitioned";
--> statement-breakpoint
ALTER TABLE "webhook_inbox_conflicts" ADD COLUMN "inbox_received_at" timestamp with time zone;
--> statement-breakpoint
UPDATE "webhook_inbox_conflicts" c SET "inbox_received_at" = i."received_at" FROM "webhook_inbox" i WHERE i."id" = c."inbox_id";
--> statement-breakpoint
ALTER TABLE "webhook_inbox_conflicts" ALTER COLUMN "inbox_received_at" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_inbox_conflicts" ADD CONSTRAINT "webhook_inbox_conflicts_inbox_fk" FOREIGN KEY ("inbox_id","inbox_received_at") REFERENCES "public"."webhook_inbox"("id","received_at") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "webhook_inbox_conflicts_inbox_id_idx" ON "webhook_inbox_conflicts" USING btree ("inbox_id","inbox_received_at");
