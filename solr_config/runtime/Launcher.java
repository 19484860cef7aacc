import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.solr.common.cloud.SolrZkClient;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;
import org.apache.zookeeper.CreateMode;

/**
 * Starts a real Solr HTTP server (Jetty + SolrDispatchFilter, context /solr, bound to 127.0.0.1)
 * from a solr home, as the project's local runtime. Run as a single-file source program:
 * java -cp 'lib/*' Launcher.java SOLR_HOME PORT [SECURITY_JSON]
 *
 * <p>ZooKeeper runs in processes of its own (-DzkHost names them). With SECURITY_JSON the file
 * becomes ZooKeeper's /security.json before Solr starts: Solr never answers a request before it
 * authenticates.
 */
public class Launcher {
  public static void main(String[] args) throws Exception {
    String home = args[0];
    int port = Integer.parseInt(args[1]);
    if (args.length > 2) {
      installSecurity(System.getProperty("zkHost"), Path.of(args[2]));
    }
    JettyConfig config = JettyConfig.builder().setPort(port).setContext("/solr").build();
    JettySolrRunner solr = new JettySolrRunner(home, config);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    solr.stop();
                  } catch (Exception e) {
                    e.printStackTrace();
                  }
                }));
    solr.start();
    System.out.println("Solr " + org.apache.solr.client.api.util.SolrVersion.LATEST + " listening on " + solr.getBaseUrl());
    Thread.currentThread().join();
  }

  /** Writes the file to ZooKeeper's /security.json, where Solr reads it at start and watches it. */
  private static void installSecurity(String zkHost, Path file) throws Exception {
    byte[] content = Files.readAllBytes(file);
    try (SolrZkClient zk =
        new SolrZkClient.Builder()
            .withUrl(zkHost)
            .withTimeout(30, TimeUnit.SECONDS)
            .withConnTimeOut(60, TimeUnit.SECONDS)
            .build()) {
      if (zk.exists("/security.json", true)) {
        zk.setData("/security.json", content, -1, true);
      } else {
        zk.create("/security.json", content, CreateMode.PERSISTENT, true);
      }
    }
  }
}
