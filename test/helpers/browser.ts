/**
 * A person's browser for the OAuth tests: follows redirects one by one (so a test sees where it went), keeps cookies
 * per RFC 6265 (tough-cookie), reads pages' forms (node-html-parser) and submits them as a browser would
 * (`application/x-www-form-urlencoded`, the form's hidden fields plus what the test types). It stops at a URL the test
 * names (a client's redirect URI, which no server here answers) and returns it.
 */
import { parse, type HTMLElement } from 'node-html-parser';
import { CookieJar } from 'tough-cookie';

/** Where the browser stopped: the last URL and, when it was a page, its status and body. */
export interface Page {
  url: string;
  status: number;
  body: string;
}

export class Browser {
  readonly jar = new CookieJar();
  /** Every URL visited, in order (redirect hops included). */
  readonly visited: string[] = [];
  /** Every response received, in order (redirect hops included), with its headers. */
  readonly responses: Array<{ url: string; status: number; headers: Headers }> = [];

  /** @param stopAt URLs for which the browser does not make the request (the client's redirect URI). */
  constructor(private readonly stopAt: (url: URL) => boolean = () => false) {}

  /** GET `url` and follow redirects. */
  open(url: string): Promise<Page> {
    return this.request(url, { method: 'GET' });
  }

  /**
   * Fill and submit a form of `page`: the first `form` element, or the one matching `selector`.
   * @param values fields to set (others keep the page's values, e.g. hidden ones).
   * @param button the `name=value` of the submit button pressed, when it matters.
   */
  submit(page: Page, values: Record<string, string> = {}, options: { selector?: string; button?: Record<string, string> } = {}): Promise<Page> {
    const root = parse(page.body);
    const form = (options.selector ? root.querySelector(options.selector) : root.querySelector('form')) as HTMLElement | null;
    if (!form) throw new Error(`no form${options.selector ? ` ${options.selector}` : ''} on ${page.url}: ${page.body.slice(0, 500)}`);
    const fields = new URLSearchParams();
    for (const input of form.querySelectorAll('input')) {
      const name = input.getAttribute('name');
      const type = input.getAttribute('type') ?? 'text';
      if (name && type !== 'submit') fields.set(name, input.getAttribute('value') ?? '');
    }
    for (const [k, v] of Object.entries({ ...values, ...options.button })) fields.set(k, v);
    const action = new URL(form.getAttribute('action') ?? page.url, page.url).href;
    const method = (form.getAttribute('method') ?? 'get').toUpperCase();
    if (method === 'GET') {
      const target = new URL(action);
      for (const [k, v] of fields) target.searchParams.set(k, v);
      return this.open(target.href);
    }
    return this.request(action, { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  }

  private async request(url: string, init: { method: string; body?: string; headers?: Record<string, string> }): Promise<Page> {
    let current = url;
    let next: typeof init | undefined = init;
    for (let hops = 0; hops < 20; hops++) {
      this.visited.push(current);
      if (this.stopAt(new URL(current))) return { url: current, status: 0, body: '' };
      const cookie = await this.jar.getCookieString(current);
      const res = await fetch(current, {
        method: next!.method,
        body: next!.body,
        redirect: 'manual',
        headers: { ...next!.headers, ...(cookie && { cookie }), accept: 'text/html,application/json' },
      });
      this.responses.push({ url: current, status: res.status, headers: res.headers });
      for (const setCookie of res.headers.getSetCookie()) await this.jar.setCookie(setCookie, current);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.arrayBuffer();
        current = new URL(location, current).href;
        next = { method: 'GET' };
        continue;
      }
      return { url: current, status: res.status, body: await res.text() };
    }
    throw new Error(`too many redirects from ${url}`);
  }
}
