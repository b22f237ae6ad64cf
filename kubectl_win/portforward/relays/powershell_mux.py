# ruff: noqa: E501 - the embedded C# keeps one statement per line
"""The multiplexing relay for PowerShell (powershell.exe 5.1 and pwsh 7).

PowerShell script blocks cannot run on .NET's I/O threads, so the relay is a small C# class
compiled in the session with Add-Type (FullLanguage mode, which the probe already requires) and
run with real threads, the same design as the python3 and native relays: the main thread reads
and checks frames from stdin, each stream has a writer (connect, queue -> socket, return window
credit) and a reader (socket -> stdout while it has credit). A malformed frame exits with code 8.
The script is fixed: no host, port or other user text is ever placed in it (targets arrive in
OPEN frames). If Add-Type fails the relay exits non-zero and the forwarder falls back.
"""

from __future__ import annotations

MUX_SCRIPT = r"""$ErrorActionPreference = 'Stop'; $ProgressPreference = 'SilentlyContinue'
Add-Type -TypeDefinition @'
using System; using System.IO; using System.Net; using System.Net.Sockets; using System.Threading;
using System.Collections.Generic; using System.Text;
public static class KwinMux {
  const int MAXP = 262144, WIN = 4194304, MAXWIN = 1 << 30;
  static Stream Out; static readonly object OutLock = new object();
  static readonly Dictionary<uint, S> Streams = new Dictionary<uint, S>();
  class S { public uint Id; public bool Udp, Dead, RDone, WDone, Eof; public Socket Sock;
    public Queue<byte[]> Q = new Queue<byte[]>(); public long Credit = WIN, Rwin = WIN; }
  static void Fail(string why) {
    var e = Console.OpenStandardError(); var b = Encoding.ASCII.GetBytes("kwin-relay: protocol error: " + why + "\n");
    e.Write(b, 0, b.Length); e.Flush(); Environment.Exit(8);
  }
  static void Put(byte[] b, int o, uint v) { b[o] = (byte)(v >> 24); b[o+1] = (byte)(v >> 16); b[o+2] = (byte)(v >> 8); b[o+3] = (byte)v; }
  static uint Get(byte[] b, int o) { return ((uint)b[o] << 24) | ((uint)b[o+1] << 16) | ((uint)b[o+2] << 8) | b[o+3]; }
  static void Emit(byte t, uint id, byte[] p, int n) {
    var h = new byte[9]; h[0] = t; Put(h, 1, id); Put(h, 5, (uint)n);
    lock (OutLock) { try { Out.Write(h, 0, 9); if (n > 0) Out.Write(p, 0, n); Out.Flush(); } catch (IOException) { Environment.Exit(0); } }
  }
  static void Finish(S s, int code, string why) {
    lock (Streams) { S cur; if (!Streams.TryGetValue(s.Id, out cur) || cur != s) return; Streams.Remove(s.Id); }
    Socket k; lock (s) { s.Dead = true; k = s.Sock; Monitor.PulseAll(s); }
    if (code >= 0) {
      var r = Encoding.UTF8.GetBytes(why); int n = Math.Min(r.Length, 256); var p = new byte[n + 1];
      p[0] = (byte)code; Array.Copy(r, 0, p, 1, n); Emit(5, s.Id, p, n + 1);
    }
    if (k != null) { try { k.Shutdown(SocketShutdown.Both); } catch (SocketException) {} k.Close(); }
  }
  static void Half(S s, bool reader) {
    bool both; lock (s) { if (reader) s.RDone = true; else s.WDone = true; both = s.RDone && s.WDone; }
    if (both) Finish(s, 0, "");
  }
  static void Reader(S s) {
    var buf = new byte[s.Udp ? 65536 : MAXP];
    while (true) {
      int size, n;
      lock (s) { while (!s.Udp && s.Credit <= 0 && !s.Dead) Monitor.Wait(s); if (s.Dead) return;
        size = s.Udp ? 65536 : (int)Math.Min(s.Credit, MAXP); }
      try { n = s.Sock.Receive(buf, 0, size, SocketFlags.None); }
      catch (SocketException e) { if (s.Udp && e.SocketErrorCode == SocketError.ConnectionReset) continue; Finish(s, 4, e.Message); return; }
      catch (ObjectDisposedException) { return; }
      if (s.Dead) return;
      if (s.Udp) { Emit(3, s.Id, buf, n); continue; }
      if (n == 0) { Emit(4, s.Id, null, 0); Half(s, true); return; }
      lock (s) s.Credit -= n;
      Emit(3, s.Id, buf, n);
    }
  }
  static void Writer(S s, string host, int port) {
    Socket k = null;
    try {
      IPAddress a; IPAddress[] all = IPAddress.TryParse(host, out a) ? new[] { a } : Dns.GetHostAddresses(host);
      SocketException last = null;
      foreach (var ad in all) {
        var c = new Socket(ad.AddressFamily, s.Udp ? SocketType.Dgram : SocketType.Stream, s.Udp ? ProtocolType.Udp : ProtocolType.Tcp);
        try { c.Connect(ad, port); k = c; break; } catch (SocketException e) { last = e; c.Close(); }
      }
      if (k == null) throw last ?? new SocketException((int)SocketError.HostNotFound);
    } catch (SocketException e) {
      var c = e.SocketErrorCode;
      Finish(s, c == SocketError.ConnectionRefused ? 1 : (c == SocketError.HostNotFound || c == SocketError.NoData || c == SocketError.TryAgain) ? 2 : 3, e.Message);
      return;
    }
    if (!s.Udp) k.NoDelay = true;
    lock (s) { if (s.Dead) { k.Close(); return; } s.Sock = k; }
    Emit(2, s.Id, null, 0);
    var t = new Thread(() => Reader(s)); t.IsBackground = true; t.Start();
    while (true) {
      byte[] item;
      lock (s) { while (s.Q.Count == 0 && !s.Eof && !s.Dead) Monitor.Wait(s); if (s.Dead) return;
        item = s.Q.Count > 0 ? s.Q.Dequeue() : null; }
      if (item == null) {
        if (!s.Udp) { try { k.Shutdown(SocketShutdown.Send); } catch (SocketException) {} Half(s, false); }
        return;
      }
      try { if (s.Udp) k.Send(item); else { int o = 0; while (o < item.Length) o += k.Send(item, o, item.Length - o, SocketFlags.None); } }
      catch (SocketException e) { if (s.Udp) continue; Finish(s, 4, e.Message); return; }
      catch (ObjectDisposedException) { return; }
      if (!s.Udp) { lock (s) s.Rwin += item.Length; var inc = new byte[4]; Put(inc, 0, (uint)item.Length); Emit(6, s.Id, inc, 4); }
    }
  }
  static bool HostOk(byte[] p, int off, int n) {
    if (n < 1 || n > 253) return false;
    for (int i = off; i < off + n; i++) { int c = p[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' || c == '%')) return false; }
    return true;
  }
  static void Handle(byte t, uint id, byte[] p) {
    if (id == 0) Fail("stream 0");
    S s;
    if (t == 1) {
      if (p.Length < 4) Fail("short OPEN");
      int port = (p[1] << 8) | p[2];
      if ((p[0] != 6 && p[0] != 17) || port == 0 || !HostOk(p, 3, p.Length - 3)) Fail("invalid OPEN");
      s = new S(); s.Id = id; s.Udp = p[0] == 17;
      lock (Streams) { if (Streams.ContainsKey(id)) Fail("stream id in use"); Streams[id] = s; }
      string host = Encoding.ASCII.GetString(p, 3, p.Length - 3);
      var w = new Thread(() => Writer(s, host, port)); w.IsBackground = true; w.Start();
      return;
    }
    if (t == 4 && p.Length != 0) Fail("EOF with a payload");
    if (t == 5 && (p.Length < 1 || p.Length > 257 || p[0] > 6)) Fail("malformed CLOSE");
    uint inc = 0;
    if (t == 6) { if (p.Length != 4) Fail("malformed WINDOW"); inc = Get(p, 0); if (inc < 1 || inc > MAXWIN) Fail("WINDOW out of range"); }
    lock (Streams) Streams.TryGetValue(id, out s);
    if (s == null) return;
    if (t == 3) { lock (s) {
      if (!s.Udp) { if (p.Length > s.Rwin) Fail("DATA beyond the window"); s.Rwin -= p.Length; if (p.Length == 0) return; }
      else if (s.Q.Count > 4096) return;
      s.Q.Enqueue(p); Monitor.PulseAll(s); } }
    else if (t == 4) { lock (s) { s.Eof = true; Monitor.PulseAll(s); } }
    else if (t == 5) Finish(s, -1, null);
    else if (t == 6) { lock (s) { s.Credit += inc; if (s.Credit > MAXWIN) Fail("window overflow"); Monitor.PulseAll(s); } }
  }
  public static void Run() {
    Out = Console.OpenStandardOutput(); var inp = Console.OpenStandardInput();
    var hello = Encoding.ASCII.GetBytes("kwin-mux 1"); Emit(0, 0, hello, hello.Length);
    var buf = new byte[1048576 + 9 + MAXP]; int have = 0;
    while (true) {
      int n = inp.Read(buf, have, buf.Length - have); if (n <= 0) break;
      have += n; int off = 0;
      while (have - off >= 9) {
        byte t = buf[off]; uint id = Get(buf, off + 1), len = Get(buf, off + 5);
        if (t != 1 && t != 3 && t != 4 && t != 5 && t != 6) Fail("unexpected frame type " + t);
        if (len > MAXP) Fail("frame too long");
        if (have - off - 9 < len) break;
        var p = new byte[len]; Array.Copy(buf, off + 9, p, 0, (int)len); off += 9 + (int)len;
        Handle(t, id, p);
      }
      Array.Copy(buf, off, buf, 0, have - off); have -= off;
    }
    if (have > 0) Fail("truncated frame");
    Environment.Exit(0);
  }
}
'@
[KwinMux]::Run()
"""
