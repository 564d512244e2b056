import pg from "pg";

/** The connections a PostgreSQL suite opens itself: `end()` in its afterAll closes them all. */
export function postgresClients() {
  const clients: pg.Client[] = [];
  return {
    async connect(url: string): Promise<pg.Client> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      return client;
    },
    end: () => Promise.all(clients.splice(0).map((client) => client.end())),
  };
}
