package datafari.rag.solr.vector;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per parent id, held from the moment a request writes a parent until its chunks are
 * written or deleted: two requests writing the same parent side by side would otherwise write their
 * chunks in either order, leaving the chunks of the older version beside the newer parent (its
 * text, its ACL). A parent is always written by its shard leader, so a lock in the leader's JVM is
 * enough; the table is static so that it outlives core reloads, and holds only the parents being
 * written (a striped table made unrelated requests wait for each other).
 *
 * <p>No deadlock: a request never waits for a lock while it holds one (it writes its pending chunks
 * and releases first), and a delete takes its locks in id order.
 */
final class ParentLocks {
  private static final ConcurrentHashMap<String, Entry> LOCKS = new ConcurrentHashMap<>();

  /** A parent's lock and how many requests hold or wait for it. */
  private static final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    int users;
  }

  /** One parent's lock as a request holds it. */
  record Held(String id, Entry entry) {
    void release() {
      entry.lock.unlock();
      leave(id);
    }
  }

  private ParentLocks() {}

  /** The parent's lock if no other request holds it, else null (without waiting). */
  static Held tryLock(String id) {
    Entry entry = enter(id);
    if (entry.lock.tryLock()) {
      return new Held(id, entry);
    }
    leave(id);
    return null;
  }

  /** The parent's lock, waiting at most {@code seconds}; null if it did not come. */
  static Held lock(String id, long seconds) {
    Entry entry = enter(id);
    boolean locked = false;
    try {
      locked = entry.lock.tryLock(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!locked) {
      leave(id);
      return null;
    }
    return new Held(id, entry);
  }

  /** The ids in the order every delete takes their locks. */
  static List<String> ordered(Collection<String> ids) {
    return List.copyOf(new TreeSet<>(ids));
  }

  private static Entry enter(String id) {
    return LOCKS.compute(
        id,
        (key, entry) -> {
          Entry e = entry == null ? new Entry() : entry;
          e.users++;
          return e;
        });
  }

  private static void leave(String id) {
    LOCKS.computeIfPresent(id, (key, entry) -> --entry.users == 0 ? null : entry);
  }
}
