// A real ClickHouse for tests and benchmarks: Debian's clickhouse-server
// started as an ordinary process on free loopback ports, from a config and
// a data directory made here in a temp folder, and stopped by the caller
// (or at exit).  Nothing outside the temp folder is read or written.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tmpdir, waitFor } from './lib.mjs';

export const SERVER = '/usr/sbin/clickhouse-server';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Make the config for one server; `cluster` is [{tcp}, …] (one shard each).
function writeConfig(dir, http, tcp, cluster) {
  const shards = (cluster || []).map((s) =>
    `<shard><replica><host>127.0.0.1</host><port>${s.tcp}</port></replica></shard>`).join('');
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.xml'), `<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${http}</http_port> <tcp_port>${tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path> <tmp_path>${dir}/tmp/</tmp_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile> <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  ${shards ? `<remote_servers><team>${shards}</team></remote_servers>` : ''}
</yandex>
`);
  fs.writeFileSync(path.join(dir, 'users.xml'), `<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
`);
}

export class ClickHouse {
  constructor(dir, http, tcp) {
    this.dir = dir;
    this.http = http;
    this.tcp = tcp;
    this.proc = null;
    this.log = path.join(dir, 'server.log');
  }

  url(db) { return `http://127.0.0.1:${this.http}/?database=${db}`; }

  async query(sql, params = '') {
    // a kept-alive connection the server closes just as it is reused
    // fails the fetch before anything was sent: try that once more
    let r;
    for (let i = 0; ; i++) {
      try {
        r = await fetch(`http://127.0.0.1:${this.http}/?${params}`, { method: 'POST', body: sql });
        break;
      } catch (e) {
        if (i >= 2 || this.proc?.exitCode !== null) throw e;
      }
    }
    const text = await r.text();
    if (r.status !== 200) throw new Error(`ClickHouse ${r.status}: ${text.slice(0, 300)}`);
    return text;
  }

  async rows(sql) {
    const t = await this.query(`${sql} FORMAT JSONEachRow`, 'output_format_json_quote_64bit_integers=0');
    return t.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  async start(timeout = 60000) {
    const out = fs.openSync(this.log, 'a');
    this.proc = spawn(SERVER, [`--config-file=${path.join(this.dir, 'config.xml')}`],
      { cwd: this.dir, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    const proc = this.proc;
    await waitFor(async () => {
      if (proc.exitCode !== null) throw new Error(`clickhouse-server exited ${proc.exitCode}: ${fs.readFileSync(this.log, 'utf8').slice(-500)}`);
      return (await this.query('SELECT 1')).trim() === '1';
    }, { timeout, interval: 100, what: `ClickHouse on :${this.http} to answer SELECT 1` });
  }

  async stop() {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 15000);
    await gone;
    clearTimeout(t);
    this.proc = null;
  }
}

// n servers; with cluster=true each knows all of them as the shards of
// cluster `team`.
export async function startClickHouses(n, { cluster = false } = {}) {
  const base = tmpdir('ch');
  const ports = [];
  for (let i = 0; i < n; i++) ports.push({ http: await freePort(), tcp: await freePort() });
  const servers = ports.map((p, i) => {
    const dir = path.join(base, `s${i}`);
    writeConfig(dir, p.http, p.tcp, cluster ? ports : null);
    return new ClickHouse(dir, p.http, p.tcp);
  });
  // never leave a server behind, however the test run ends
  const killAll = () => { for (const s of servers) try { s.proc?.kill('SIGKILL'); } catch { /* gone */ } };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.once(sig, () => { killAll(); process.exit(1); });
  await Promise.all(servers.map((s) => s.start()));
  return { base, servers };
}
