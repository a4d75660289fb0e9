// Following a publication (SNAPSHOT_FOLLOW), in the one owner of the service: polls latest.json with conditional
// requests, takes each new publication (follow-install.ts), remembers refusals per signature, and keeps the state
// /readyz and /metrics show (the URL, the last check and success, the publication seen, any refusal, staleness).
import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import { getSmall } from './follow-fetch.ts';
import { inherentRefusal, installed, PART, putBackServed, removeParts, takePublication } from './follow-install.ts';
import {
  FollowRefusal,
  type FollowRefused,
  type FollowState,
  type FollowTarget,
  initialState,
  type ServedMeta,
  settled,
  shownUrl,
} from './follow-state.ts';
import { type Latest, type PublicKey, parseLatest, vouchedFor } from './follow-verify.ts';

export {
  type FollowRefused,
  type FollowState,
  type FollowTarget,
  spreadDelay,
  staleness,
} from './follow-state.ts';

export interface FollowSettings {
  url: string;
  key: PublicKey;
  intervalMs: number;
  /** An extra request header for a private bucket or CDN ("Name: value"); never logged. */
  header?: string;
  staleMs: number;
  /** The spread: this replica waits `delayMs` (derived from its instance name) before taking a new publication. */
  delayMs: number;
}

const REMEMBERED = 64;
/** A publication the owner refused for a reason that may pass is tried this many times (backing off) before it is remembered. */
const CANDIDATE_TRIES = 3;
const iso = (ms: number) => new Date(ms).toISOString();

export class Follower {
  readonly state: FollowState;
  private readonly base: URL;
  private readonly extra: OutgoingHttpHeaders = {};
  private validators: OutgoingHttpHeaders = {};
  private readonly refused = new Map<string, FollowRefused>();
  private takenSig: string | null = null;
  /** Candidate refusals that may pass (a worker too slow, the file changed while checked): tries, next try's time. */
  private readonly retries = new Map<string, { tries: number; at: number }>();
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** A refusal that may pass (no free disk): latest.json is read again at the next check, not only once it changes. */
  private again = false;

  constructor(
    private readonly settings: FollowSettings,
    private readonly target: FollowTarget,
    private readonly opts: {
      log: (l: Record<string, unknown>) => void;
      changed(state: FollowState): void;
      now?: () => number;
    },
  ) {
    this.base = new URL(settings.url);
    if (settings.header) {
      const i = settings.header.indexOf(':');
      this.extra[settings.header.slice(0, i).trim()] = settings.header.slice(i + 1).trim();
    }
    this.state = initialState(shownUrl(settings.url), settings, iso(this.now()));
    // A part left by a process that is gone is not resumed (its server's validator is unknown): removed.
    removeParts(target.path, null);
    opts.log({
      level: 'info',
      msg: 'following a publication',
      url: this.state.url,
      interval_ms: settings.intervalMs,
      delay_ms: settings.delayMs,
    });
  }

  private now() {
    return (this.opts.now ?? Date.now)();
  }

  /** Checks now, then every interval (measured from the end of each check). */
  start(): void {
    void this.checkNow();
  }

  /** One check now (or the one under way). */
  checkNow(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.running ??= this.check().finally(() => {
      this.running = null;
      if (this.timer) clearTimeout(this.timer);
      if (!this.closed) this.timer = setTimeout(() => void this.checkNow(), this.settings.intervalMs).unref();
    });
    return this.running;
  }

  /**
   * SIGHUP: forgets the refusals remembered (a file fixed on the server under the same signature is downloaded
   * again) and checks latest.json now, unconditionally.
   */
  lookAgain(): Promise<void> {
    this.refused.clear();
    this.validators = {};
    return this.checkNow();
  }

  private async check(): Promise<void> {
    this.state.last_check = iso(this.now());
    try {
      await this.follow();
      this.state.last_success = iso(this.now());
      this.state.last_error = null;
    } catch (e) {
      if (this.closed) return;
      this.state.last_error = (e as Error).message;
      this.opts.log({
        level: 'warn',
        msg: 'following: the check failed; will try again',
        url: this.state.url,
        error: (e as Error).message,
      });
    } finally {
      this.opts.changed(this.state);
    }
  }

  /** latest.json, unless unchanged since a final outcome; then the publication it names. */
  private async follow(): Promise<void> {
    const r = await getSmall(this.base, { Accept: 'application/json', ...this.validators }, this.extra, 64 * 1024);
    if (r.status === 304) return;
    if (r.status !== 200) throw new Error(`${this.state.url}: HTTP ${r.status}`);
    const validators = settled(r.headers);
    let latest: Latest;
    try {
      latest = parseLatest(r.body.toString('utf8'));
    } catch (e) {
      this.validators = validators; // looked at again once it changes
      return this.refuse({ snapshot_id: '', reason: 'manifest', message: (e as Error).message }, null);
    }
    this.state.publication = {
      snapshot_id: latest.snapshot_id,
      published_at: latest.published_at,
      built_at: latest.built_at,
    };
    this.again = false;
    await this.consider(latest);
    if (!this.again) this.validators = validators;
  }

  private async consider(latest: Latest): Promise<void> {
    const fileUrl = this.inFolder(latest.file);
    const sigUrl = this.inFolder(latest.signature);
    const served = this.target.served();
    const sig = await getSmall(sigUrl, {}, this.extra, 16 * 1024);
    if (sig.status !== 200) throw new Error(`${shownUrl(sigUrl.href)}: HTTP ${sig.status}`);
    const signature = sig.body.toString('utf8');
    // A publication is its signature and what latest.json says of its file (a corrected size or id is another one).
    const sigKey = createHash('sha256')
      .update(sig.body)
      .update(`\n${latest.file}\n${latest.size}\n${latest.snapshot_id}`)
      .digest('hex');
    const known = this.refused.get(sigKey);
    if (known !== undefined) {
      this.state.refused = known; // refused before: not downloaded again
      return;
    }
    if (sigKey === this.takenSig) return;
    if ((this.retries.get(sigKey)?.at ?? 0) > this.now()) {
      this.again = true; // a passing candidate refusal's backoff: looked at again at a later check
      return;
    }
    if (served?.snapshot_id === latest.snapshot_id) {
      // The snapshot served, published (again): its file on disk checked against the signature, not downloaded.
      const same = await vouchedFor(served.file, signature, this.settings.key);
      if (same !== null) return this.taken(sigKey, latest, same.expiresAt);
    }
    await this.take(latest, fileUrl, signature, sigKey, served);
  }

  /**
   * A file of latest.json's own folder (a plain name: parseLatest refuses a '/', '%', '..', a URL), asked for with
   * SNAPSHOT_FOLLOW's query: a folder-wide token (a CDN's signed cookie-less URL, a SAS token) opens every file.
   */
  private inFolder(name: string): URL {
    const url = new URL(name, this.base);
    url.search = this.base.search;
    return url;
  }

  private async take(latest: Latest, fileUrl: URL, signature: string, sigKey: string, served: ServedMeta | null) {
    // The spread orders replicas that serve something; one that serves nothing yet takes its first at once.
    const delayMs = served === null ? 0 : this.settings.delayMs;
    await this.wait(delayMs);
    const { log } = this.opts;
    log({
      level: 'info',
      msg: 'following: a new publication; downloading it',
      snapshot_id: latest.snapshot_id,
      size: latest.size,
      delay_ms: delayMs,
    });
    const part = `${join(dirname(this.target.path), PART(this.target.path))}${sigKey.slice(0, 16)}.part`;
    removeParts(this.target.path, part); // a superseded publication's part is never resumed
    try {
      const { expiresAt, seconds, inode } = await takePublication({
        latest,
        fileUrl,
        signature,
        key: this.settings.key,
        part,
        path: this.target.path,
        extra: this.extra,
        served,
        servedExpiresAt: this.state.served?.expires_at ?? null,
        cut: (bytes, e) =>
          log({ level: 'warn', msg: 'following: the download was cut; resuming', bytes, error: e.message }),
        stopped: () => this.closed,
      });
      log({
        level: 'info',
        msg: 'following: publication downloaded and its signature verified; swapping it in',
        snapshot_id: latest.snapshot_id,
        seconds: Math.round(seconds * 1000) / 1000,
        mib_per_s: Math.round(latest.size / 1048576 / seconds),
      });
      if (!(await installed(this.target, inode))) {
        const why = this.target.refusedBecause() ?? 'see candidate in /readyz';
        await putBackServed(
          this.target,
          `${join(dirname(this.target.path), PART(this.target.path))}served.tmp`,
          inode,
          log,
        );
        throw this.candidateRefusal(sigKey, why);
      }
      this.taken(sigKey, latest, expiresAt);
    } catch (e) {
      if (!(e instanceof FollowRefusal)) throw e;
      this.again = !e.lasting;
      this.refuse({ snapshot_id: latest.snapshot_id, reason: e.reason, message: e.message }, e.lasting ? sigKey : null);
    }
  }

  /** The owner's refusal: lasting when the file itself fails (quick_check, schema, statements) or after a few tries. */
  private candidateRefusal(sigKey: string, why: string): FollowRefusal {
    const tries = (this.retries.get(sigKey)?.tries ?? 0) + 1;
    const lasting = inherentRefusal(why) || tries >= CANDIDATE_TRIES;
    if (lasting) this.retries.delete(sigKey);
    else this.retries.set(sigKey, { tries, at: this.now() + this.settings.intervalMs * 2 ** tries });
    const attempt = lasting ? '' : ` (try ${tries} of ${CANDIDATE_TRIES}; tried again later)`;
    return new FollowRefusal('candidate', `the service's checks refused it: ${why}${attempt}`, lasting);
  }

  private taken(sigKey: string, latest: Latest, expiresAt: string | null): void {
    this.retries.clear();
    this.takenSig = sigKey;
    this.state.served = { snapshot_id: latest.snapshot_id, expires_at: expiresAt };
    this.state.refused = null;
  }

  /** A refusal: logged (a signature's named as such), shown, and remembered by its signature when lasting. */
  private refuse(r: Omit<FollowRefused, 'at'>, sigKey: string | null): void {
    const refused = { ...r, at: iso(this.now()) };
    this.state.refused = refused;
    this.state.refusals[r.reason] = (this.state.refusals[r.reason] ?? 0) + 1;
    if (sigKey !== null) {
      this.refused.set(sigKey, refused);
      if (this.refused.size > REMEMBERED) this.refused.delete(this.refused.keys().next().value!);
    }
    const serving = this.target.served()?.snapshot_id ?? null;
    this.opts.log({
      level: 'error',
      msg: `following: publication refused (${r.reason === 'signature' ? 'signature refused' : r.reason}); ${serving === null ? 'no snapshot served yet' : `still serving ${serving}`}`,
      snapshot_id: r.snapshot_id,
      reason: r.reason,
      error: r.message,
    });
    this.opts.changed(this.state);
  }

  private wait(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
