package datafari.rag.solr.textvector;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.solr.SolrTestCase;
import org.junit.Test;

/**
 * A query text parsed again (by each shard a node holds, after the node that received it) is
 * embedded once; documents' texts are embedded every time, and a failure is not kept.
 */
public class TextToVectorModelTest extends SolrTestCase {
  /** Counts the texts it embeds; "fail" fails. */
  private static final class Counting implements EmbeddingModel {
    final AtomicInteger texts = new AtomicInteger();

    @Override
    public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
      List<Embedding> out = new ArrayList<>();
      for (TextSegment segment : segments) {
        if (segment.text().equals("fail")) {
          throw new IllegalStateException("the service is down");
        }
        texts.incrementAndGet();
        out.add(Embedding.from(new float[] {segment.text().length(), 1f}));
      }
      return Response.from(out);
    }
  }

  @Test
  public void testAQueryTextIsEmbeddedOnce() {
    Counting counting = new Counting();
    TextToVectorModel model = new TextToVectorModel("m", "C", Map.of(), counting);
    float[] first = model.vectoriseQuery("pump maintenance");
    float[] again = model.vectoriseQuery("pump maintenance");
    assertSame(first, again);
    assertEquals(1, counting.texts.get());
    model.vectoriseQuery("fire drill");
    assertEquals(2, counting.texts.get());
  }

  @Test
  public void testDocumentTextsAreEmbeddedEveryTime() {
    Counting counting = new Counting();
    TextToVectorModel model = new TextToVectorModel("m", "C", Map.of(), counting);
    model.vectorise("chunk one");
    model.vectorise("chunk one");
    assertEquals(2, counting.texts.get());
  }

  @Test
  public void testAFailureIsNotKept() {
    Counting counting = new Counting();
    TextToVectorModel model = new TextToVectorModel("m", "C", Map.of(), counting);
    expectThrows(IllegalStateException.class, () -> model.vectoriseQuery("fail"));
    expectThrows(IllegalStateException.class, () -> model.vectoriseQuery("fail"));
    assertEquals(0, counting.texts.get());
  }
}
