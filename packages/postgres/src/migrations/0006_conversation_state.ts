import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0006: the conversation state of a chat (status, priority, assignee, snooze) and the counts of listed
 * chats per bot, status and assignee, kept by a trigger in the transaction of every change: a chat
 * created, its status or assignee changed, moved to a supergroup (unlisted), or deleted (as SQLite's 0025).
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql.raw(`
ALTER TABLE botrelay_chats
  ADD COLUMN status text COLLATE "C" NOT NULL DEFAULT 'open',
  ADD COLUMN priority text COLLATE "C" NOT NULL DEFAULT 'none',
  ADD COLUMN assignee_id bigint NOT NULL DEFAULT 0,
  ADD COLUMN snoozed_until bigint NOT NULL DEFAULT 0;
CREATE INDEX botrelay_chats_snoozed ON botrelay_chats (snoozed_until) WHERE status = 'snoozed';
CREATE TABLE botrelay_chat_counts (
  bot_id bigint NOT NULL REFERENCES botrelay_bots (id) ON DELETE CASCADE,
  status text COLLATE "C" NOT NULL,
  assignee_id bigint NOT NULL,
  chats bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (bot_id, status, assignee_id)
);
INSERT INTO botrelay_chat_counts (bot_id, status, assignee_id, chats)
  SELECT bot_id, status, assignee_id, count(*) FROM botrelay_chats WHERE migrated_to_chat_id = 0
  GROUP BY bot_id, status, assignee_id;
CREATE FUNCTION botrelay_chats_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.migrated_to_chat_id = 0 THEN
    UPDATE botrelay_chat_counts SET chats = chats - 1
      WHERE bot_id = OLD.bot_id AND status = OLD.status AND assignee_id = OLD.assignee_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.migrated_to_chat_id = 0 THEN
    INSERT INTO botrelay_chat_counts (bot_id, status, assignee_id, chats)
      VALUES (NEW.bot_id, NEW.status, NEW.assignee_id, 1)
      ON CONFLICT (bot_id, status, assignee_id) DO UPDATE SET chats = botrelay_chat_counts.chats + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER botrelay_chats_counted_insert AFTER INSERT ON botrelay_chats
  FOR EACH ROW WHEN (NEW.migrated_to_chat_id = 0) EXECUTE FUNCTION botrelay_chats_counted();
CREATE TRIGGER botrelay_chats_counted_update AFTER UPDATE OF status, assignee_id, migrated_to_chat_id ON botrelay_chats
  FOR EACH ROW WHEN (OLD.status <> NEW.status OR OLD.assignee_id <> NEW.assignee_id
    OR (OLD.migrated_to_chat_id = 0) <> (NEW.migrated_to_chat_id = 0))
  EXECUTE FUNCTION botrelay_chats_counted();
CREATE TRIGGER botrelay_chats_counted_delete AFTER DELETE ON botrelay_chats
  FOR EACH ROW WHEN (OLD.migrated_to_chat_id = 0) EXECUTE FUNCTION botrelay_chats_counted();
`).execute(db)
  },
  async down(db: Kysely<any>) {
    await sql.raw(`
DROP FUNCTION IF EXISTS botrelay_chats_counted() CASCADE;
DROP TABLE IF EXISTS botrelay_chat_counts;
DROP INDEX IF EXISTS botrelay_chats_snoozed;
ALTER TABLE botrelay_chats DROP COLUMN IF EXISTS status, DROP COLUMN IF EXISTS priority,
  DROP COLUMN IF EXISTS assignee_id, DROP COLUMN IF EXISTS snoozed_until;
`).execute(db)
  }
}
