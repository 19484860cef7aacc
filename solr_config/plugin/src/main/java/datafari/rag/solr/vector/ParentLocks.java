package datafari.rag.solr.vector;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Which write of a parent its chunks belong to. Each write of a parent (an add, a delete) claims it
 * in the order the writes happen; only the newest claim's chunks are written or deleted: an older
 * write whose chunks come later (its embedding was slow, its request was sent again and overtaken
 * by the resend) skips them, rather than leaving the chunks of the older version beside the newer
 * parent (its text, its ACL). So no write waits for another's embedding — a resend never waits on
 * its own earlier attempt; the chunks' writes of a parent only take turns for the one request to
 * VectorMain under way ({@link #writeLocks}), bounded by the chunk client's timeouts.
 *
 * <p>A parent is always written by its shard leader, so this table in the leader's JVM is enough;
 * it is static so that it outlives core reloads, and holds only the parents being written. No
 * deadlock: a request takes the write locks of a batch in id order, and holds no other lock while
 * it waits for them.
 */
final class ParentLocks {
  private static final ConcurrentHashMap<String, Entry> LOCKS = new ConcurrentHashMap<>();
  private static final AtomicLong ORDER = new AtomicLong();

  /** A parent's newest claim, its write lock, and how many requests hold a claim on it. */
  private static final class Entry {
    final ReentrantLock write = new ReentrantLock();
    long newest; // guarded by this
    int users; // guarded by LOCKS' compute
  }

  /** What a parent's own write is (the add or delete of the parent in FileShare). */
  @FunctionalInterface
  interface ParentWrite {
    void run() throws IOException;
  }

  /** One write's claim on a parent. */
  record Claim(String id, long order, Entry entry) {
    /** No newer write of the parent has claimed it since: this write's chunks are the parent's. */
    boolean current() {
      synchronized (entry) {
        return entry.newest == order;
      }
    }

    /** The claim is given up (its request ended). */
    void release() {
      leave(id);
    }
  }

  private ParentLocks() {}

  /**
   * Claims the parent as its newest write and runs the parent's own {@code write} in the same step
   * (two writes of one parent claim in the order they write it); a {@code write} that fails
   * withdraws the claim.
   */
  static Claim claim(String id, ParentWrite write) throws IOException {
    Entry entry = enter(id);
    synchronized (entry) {
      long before = entry.newest;
      long order = ORDER.incrementAndGet();
      entry.newest = order;
      try {
        write.run();
      } catch (IOException | RuntimeException e) {
        entry.newest = before;
        leave(id);
        throw e;
      }
      return new Claim(id, order, entry);
    }
  }

  /**
   * The write locks of these claims' parents, taken in id order, each waited for at most {@code
   * seconds}; null (none kept) if one did not come. Unlock them with {@link #unlock}.
   */
  static List<ReentrantLock> writeLocks(Collection<Claim> claims, long seconds) {
    List<Claim> ordered = new ArrayList<>(claims);
    ordered.sort(Comparator.comparing(Claim::id));
    List<ReentrantLock> taken = new ArrayList<>();
    for (Claim claim : ordered) {
      ReentrantLock lock = claim.entry().write;
      boolean locked = false;
      try {
        locked = lock.tryLock(seconds, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!locked) {
        unlock(taken);
        return null;
      }
      taken.add(lock);
    }
    return taken;
  }

  static void unlock(List<ReentrantLock> locks) {
    for (ReentrantLock lock : locks) {
      lock.unlock();
    }
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
