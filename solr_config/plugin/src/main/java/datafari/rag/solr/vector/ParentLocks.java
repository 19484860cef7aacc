package datafari.rag.solr.vector;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per parent id (striped), held from the moment a request writes a parent until its
 * chunks are written or deleted: two requests writing the same parent side by side would
 * otherwise write their chunks in either order, leaving the chunks of the older version beside
 * the newer parent (its text, its ACL). A parent is always written by its shard leader, so a lock
 * in the leader's JVM is enough; the table is static so that it outlives core reloads.
 *
 * <p>No deadlock: a request never waits for a lock while it holds one (it writes its pending
 * chunks and releases first), and a delete takes its locks in stripe order.
 */
final class ParentLocks {
  private static final int STRIPES = 4096;
  private static final ReentrantLock[] LOCKS = new ReentrantLock[STRIPES];

  static {
    for (int i = 0; i < STRIPES; i++) {
      LOCKS[i] = new ReentrantLock();
    }
  }

  private ParentLocks() {}

  static ReentrantLock of(String parentId) {
    return LOCKS[stripe(parentId)];
  }

  /** The locks of these parents, each once, in the order every delete takes them. */
  static List<ReentrantLock> ordered(Collection<String> parentIds) {
    TreeSet<Integer> stripes = new TreeSet<>();
    for (String id : parentIds) {
      stripes.add(stripe(id));
    }
    return stripes.stream().map(i -> LOCKS[i]).toList();
  }

  private static int stripe(String parentId) {
    return Math.floorMod(parentId.hashCode(), STRIPES);
  }
}
