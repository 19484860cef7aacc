package datafari.rag.solr.textvector;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.solr.SolrTestCase;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The wide search on a real HNSW index of several segments: it keeps exactly topK matches, they are
 * the best topK of the efSearch candidates, and over many queries they find more of the true
 * nearest neighbours than a beam topK wide.
 */
public class WideKnnFloatVectorQueryTest extends SolrTestCase {
  private static final int DOCS = 4000;
  private static final int DIMENSION = 32;
  private static final String FIELD = "v";
  private static final float[][] VECTORS = new float[DOCS][];
  private static Directory directory;
  private static DirectoryReader reader;

  @BeforeClass
  public static void index() throws Exception {
    Random random = new Random(42);
    directory = new ByteBuffersDirectory();
    IndexWriterConfig config = new IndexWriterConfig().setMergePolicy(NoMergePolicy.INSTANCE);
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (int i = 0; i < DOCS; i++) {
        VECTORS[i] = unit(random);
        Document doc = new Document();
        doc.add(new KnnFloatVectorField(FIELD, VECTORS[i], VectorSimilarityFunction.DOT_PRODUCT));
        writer.addDocument(doc);
        if (i % 1000 == 999) {
          writer.commit(); // four segments: the merge across leaves is exercised
        }
      }
    }
    reader = DirectoryReader.open(directory);
    assertEquals(4, reader.leaves().size());
  }

  @AfterClass
  public static void close() throws Exception {
    reader.close();
    directory.close();
    reader = null;
    directory = null;
  }

  private static float[] unit(Random random) {
    float[] v = new float[DIMENSION];
    double norm = 0;
    for (int d = 0; d < DIMENSION; d++) {
      v[d] = (float) random.nextGaussian();
      norm += v[d] * v[d];
    }
    for (int d = 0; d < DIMENSION; d++) {
      v[d] /= (float) Math.sqrt(norm);
    }
    return v;
  }

  private static Set<Integer> exact(float[] query, int k) {
    Integer[] order = new Integer[DOCS];
    float[] scores = new float[DOCS];
    for (int i = 0; i < DOCS; i++) {
      order[i] = i;
      scores[i] = VectorSimilarityFunction.DOT_PRODUCT.compare(query, VECTORS[i]);
    }
    Arrays.sort(order, (a, b) -> Float.compare(scores[b], scores[a]));
    return new HashSet<>(Arrays.asList(order).subList(0, k));
  }

  private static List<Integer> docs(TopDocs top) {
    List<Integer> ids = new ArrayList<>();
    for (ScoreDoc hit : top.scoreDocs) {
      ids.add(hit.doc);
    }
    return ids;
  }

  @Test
  public void testKeepsTheBestTopKOfTheWiderSearch() throws Exception {
    IndexSearcher searcher = new IndexSearcher(reader);
    float[] query = unit(new Random(7));
    TopDocs wide = searcher.search(new WideKnnFloatVectorQuery(FIELD, query, 5, 100, null), 50);
    TopDocs candidates = searcher.search(new KnnFloatVectorQuery(FIELD, query, 100), 50);
    assertEquals(5, wide.scoreDocs.length);
    assertEquals(docs(candidates).subList(0, 5), docs(wide));
  }

  @Test
  public void testFindsMoreOfTheTrueNeighboursThanANarrowBeam() throws Exception {
    IndexSearcher searcher = new IndexSearcher(reader);
    Random random = new Random(11);
    int narrowFound = 0;
    int wideFound = 0;
    int queries = 100;
    for (int q = 0; q < queries; q++) {
      float[] query = unit(random);
      Set<Integer> truth = exact(query, 10);
      for (int doc : docs(searcher.search(new KnnFloatVectorQuery(FIELD, query, 10), 10))) {
        narrowFound += truth.contains(doc) ? 1 : 0;
      }
      for (int doc :
          docs(searcher.search(new WideKnnFloatVectorQuery(FIELD, query, 10, 100, null), 10))) {
        wideFound += truth.contains(doc) ? 1 : 0;
      }
    }
    double narrow = narrowFound / (10.0 * queries);
    double wide = wideFound / (10.0 * queries);
    assertTrue("wide " + wide + " narrow " + narrow, wide > narrow);
    assertTrue("wide " + wide, wide >= 0.95);
  }

  @Test
  public void testQueriesKeepingDifferentCountsAreNotEqual() {
    float[] query = unit(new Random(3));
    WideKnnFloatVectorQuery ten = new WideKnnFloatVectorQuery(FIELD, query, 10, 100, null);
    assertEquals(ten, new WideKnnFloatVectorQuery(FIELD, query, 10, 100, null));
    assertEquals(
        ten.hashCode(), new WideKnnFloatVectorQuery(FIELD, query, 10, 100, null).hashCode());
    assertNotEquals(ten, new WideKnnFloatVectorQuery(FIELD, query, 20, 100, null));
    assertNotEquals(ten, new WideKnnFloatVectorQuery(FIELD, query, 10, 50, null));
  }

  @Test
  public void testABeamNarrowerThanTopKIsWidenedToIt() throws Exception {
    IndexSearcher searcher = new IndexSearcher(reader);
    float[] query = unit(new Random(5));
    TopDocs got = searcher.search(new WideKnnFloatVectorQuery(FIELD, query, 10, 3, null), 50);
    assertEquals(docs(searcher.search(new KnnFloatVectorQuery(FIELD, query, 10), 50)), docs(got));
  }
}
