// The subset of autocannon's API the API benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    onResponse?: (status: number, body: string) => void;
  }
  interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    requests?: Request[];
    /** Called with each connection's client; it emits 'request' as it writes each request. */
    setupClient?: (client: { once(event: 'request', listener: () => void): void }) => void;
  }
  interface Histogram {
    average: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
