# The official Solr 9.10.1 image (9.10.1 fixes CVE-2026-22022 and CVE-2026-22444) plus the project's text-to-vector plugin (knn_text_to_vector,
# the text-to-vector update processor and model store) and langchain4j, on Solr's shared lib.
FROM maven:3.9-eclipse-temurin-17 AS plugin
WORKDIR /build
COPY solr_config/plugin/ ./
RUN mvn -q -B package -DskipTests \
 && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/lib \
        -DexcludeGroupIds=com.fasterxml.jackson.core -DexcludeArtifactIds=slf4j-api

FROM solr:9.10.1
COPY --from=plugin /build/target/datafari-rag-solr-plugin-1.0.0.jar /build/target/lib/ /opt/datafari-rag-lib/
ENV SOLR_OPTS="-Dsolr.sharedLib=/opt/datafari-rag-lib"
