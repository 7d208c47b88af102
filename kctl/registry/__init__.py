"""The HTTP client of a Confluent-compatible Schema Registry (Confluent's, Karapace, Redpanda's,
Apicurio's ccompat API): stdlib only, one kept-alive connection, schemas cached per client."""
