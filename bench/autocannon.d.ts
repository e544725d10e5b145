// The part of autocannon's API that bench/forms.ts uses (the package ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    requests?: Array<{ setupRequest?: (request: Request) => Request }>;
  }
  interface Result {
    requests: { average: number };
    non2xx: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
