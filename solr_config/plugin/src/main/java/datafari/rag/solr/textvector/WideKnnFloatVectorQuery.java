package datafari.rag.solr.textvector;

import java.util.Objects;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TopDocs;

/**
 * A kNN search whose HNSW beam is wider than the results it keeps: each segment is searched for
 * {@code efSearch} candidates and the best {@code topK} of all of them are the matches. A beam only
 * {@code topK} wide misses true neighbours as the graph grows (at 100,000 chunks a beam of 10 finds
 * about two thirds of the true top 10); Solr 10's knn parser takes the same {@code efSearch}.
 */
final class WideKnnFloatVectorQuery extends KnnFloatVectorQuery {
  private final int topK;

  WideKnnFloatVectorQuery(String field, float[] target, int topK, int efSearch, Query filter) {
    super(field, target, Math.max(topK, efSearch), filter);
    this.topK = topK;
  }

  @Override
  protected TopDocs mergeLeafResults(TopDocs[] perLeafResults) {
    return TopDocs.merge(topK, perLeafResults);
  }

  @Override
  public boolean equals(Object o) {
    return super.equals(o) && ((WideKnnFloatVectorQuery) o).topK == topK;
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), topK);
  }

  @Override
  public String toString(String field) {
    return super.toString(field) + "[topK=" + topK + "]";
  }
}
