# ruff: noqa: E501 - the PowerShell keeps one statement per line
"""The PowerShell `kubectl win collect` runs in a HostProcess pod on each node: one fixed script, no user text.

The script is a constant. The command line carries a fixed loader (-EncodedCommand, so no quoting rules
apply) that pins the script's SHA-256; stdin carries, line 1, what the script needs to know (the log size,
the node's size cap and time budget, and the lists of knowledge/collect.yaml: log files, event logs, config
files, what is never collected, the redaction patterns) as JSON, read as data: values are only ever
compared, opened or tested, never run or spliced into code; line 2, the script itself, which the loader
runs only if its hash matches.

It writes nothing to stdout but one tar.gz stream (tar.exe, inbox since Windows Server 2019) of a folder:
`manifest.json` (every item: its command, outcome, seconds, bytes; what was left out and why), `hns.json`
(the hns script's dump, the format `hns --from-file` reads), `logs/<component>.log`, `events/<name>.log`,
`config/...`, and text output of node commands. Every item is tried on its own: a failure is recorded and
the next item runs. Items stop when the time budget is spent or the size cap is reached (recorded as
skipped). Before anything is written it goes through the redaction patterns; kubeconfigs, bootstrap
tokens, keys and the kubelet's credentials are never read, only listed. Folders of runs that died are
removed from the node's temp folder at the start.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kubectl_win.hns.script import SCRIPT as HNS_SCRIPT

FORMAT = "kubectl-win-node/1"
MARKER = "# kubectl-win collect script, " + FORMAT

SCRIPT = MARKER + r"""
# The loader read the parameters (one JSON line on stdin); stdout carries only the tar.gz of what was collected.
$ErrorActionPreference = 'Stop'
# Nothing but the archive may reach stdout: the console host writes these streams there.
$ProgressPreference = 'SilentlyContinue'
$WarningPreference = 'SilentlyContinue'
$VerbosePreference = 'SilentlyContinue'
$InformationPreference = 'SilentlyContinue'
$started = Get-Date
$p = $kwinParameters | ConvertFrom-Json
$utf8 = New-Object System.Text.UTF8Encoding $false
$temp = [System.IO.Path]::GetTempPath()
Get-ChildItem -Path $temp -Filter 'kubectl-win-collect-*' -ErrorAction SilentlyContinue |
    Where-Object { $_.LastWriteTime -lt (Get-Date).AddHours(-1) } |
    ForEach-Object { Remove-Item -LiteralPath $_.FullName -Recurse -Force -ErrorAction SilentlyContinue }
$root = Join-Path $temp ('kubectl-win-collect-' + [guid]::NewGuid().ToString('N'))
$out = Join-Path $root 'node'
$archive = Join-Path $root 'node.tar.gz'
$null = New-Item -ItemType Directory -Path $out
$items = New-Object System.Collections.ArrayList
$leftOut = New-Object System.Collections.ArrayList
$script:used = [long]0

function Test-Budget([string]$Name, [string]$File) {
    if (((Get-Date) - $started).TotalSeconds -gt [double]$p.budgetSeconds) {
        $null = $items.Add([ordered]@{ name = $Name; file = $File; outcome = 'skipped'; error = 'time budget spent' })
        return $false
    }
    if ($script:used -ge [long]$p.capBytes) {
        $null = $items.Add([ordered]@{ name = $Name; file = $File; outcome = 'skipped'; error = 'size cap reached' })
        return $false
    }
    return $true
}

function Protect-Text([string]$Text, [string]$Kind) {
    $counts = [ordered]@{}
    foreach ($rule in $p.redact) {
        if (@($rule.in) -notcontains $Kind) { continue }
        $found = [regex]::Matches($Text, $rule.pattern).Count
        if ($found -gt 0) {
            $Text = [regex]::Replace($Text, $rule.pattern, '${1}<redacted>')
            $counts[$rule.name] = $found
        }
    }
    return @($Text, $counts)
}

function Write-Part([string]$File, [string]$Text, [string]$Kind) {
    $protected = Protect-Text $Text $Kind
    $Text = $protected[0]
    $room = [long]$p.capBytes - $script:used
    $truncated = $false
    if ($Text.Length -gt $room) { $Text = $Text.Substring(0, [int][Math]::Max(0, $room)); $truncated = $true }
    $path = Join-Path $out $File
    $null = New-Item -ItemType Directory -Force -Path (Split-Path -Parent $path)
    [System.IO.File]::WriteAllText($path, $Text, $utf8)
    $size = (Get-Item -LiteralPath $path).Length
    $script:used += $size
    return [ordered]@{ bytes = $size; truncated = $truncated; redacted = $protected[1] }
}

function Save-Item([string]$Name, [string]$File, [scriptblock]$Block, [string]$Kind = 'log', [string]$Source = '') {
    if (-not (Test-Budget $Name $File)) { return }
    $clock = [Diagnostics.Stopwatch]::StartNew()
    $entry = [ordered]@{ name = $Name; file = $File; command = $Block.ToString().Trim() }
    if ($Source) { $entry.source = $Source }
    try {
        $ErrorActionPreference = 'Continue'
        $global:LASTEXITCODE = 0
        $text = (& $Block *>&1 | ForEach-Object { "$_" }) -join "`r`n"
        $entry.exitCode = $LASTEXITCODE
        $written = Write-Part $File $text $Kind
        $entry.outcome = 'ok'
        foreach ($key in $written.Keys) { $entry[$key] = $written[$key] }
    } catch {
        $entry.outcome = 'error'
        $entry.error = $_.Exception.Message
    }
    $entry.seconds = [Math]::Round($clock.Elapsed.TotalSeconds, 2)
    $null = $items.Add($entry)
}

function Read-Tail([string]$Path, [long]$Bytes) {
    # FileShare ReadWrite and Delete: the services keep their logs open for writing.
    $share = [System.IO.FileShare]::ReadWrite -bor [System.IO.FileShare]::Delete
    $stream = [System.IO.File]::Open($Path, [System.IO.FileMode]::Open, [System.IO.FileAccess]::Read, $share)
    try {
        $start = [Math]::Max([long]0, $stream.Length - $Bytes)
        $null = $stream.Seek($start, [System.IO.SeekOrigin]::Begin)
        $buffer = New-Object byte[] ([int]($stream.Length - $start))
        $read = 0
        while ($read -lt $buffer.Length) {
            $n = $stream.Read($buffer, $read, $buffer.Length - $read)
            if ($n -le 0) { break }
            $read += $n
        }
        $text = $utf8.GetString($buffer, 0, $read)
        if ($start -gt 0 -and $text.IndexOf("`n") -ge 0) { $text = $text.Substring($text.IndexOf("`n") + 1) }
        return $text
    } finally { $stream.Dispose() }
}

function Test-Never([string]$Path) {
    foreach ($rule in $p.never) {
        if ($Path -eq $rule.path -or $Path.StartsWith($rule.path + '\', [StringComparison]::OrdinalIgnoreCase)) {
            return $rule.reason
        }
    }
    $leaf = Split-Path -Leaf $Path
    foreach ($pattern in $p.neverNames) { if ($leaf -like $pattern) { return 'credential file name' } }
    return $null
}

function Save-File([string]$Name, [string]$File, [string]$Path, [string]$Kind) {
    if (-not (Test-Budget $Name $File)) { return }
    $clock = [Diagnostics.Stopwatch]::StartNew()
    $entry = [ordered]@{ name = $Name; file = $File; command = "Read-Tail '$Path'"; source = $Path }
    try {
        $text = Read-Tail $Path ([long]$p.logBytes)
        $why = $null
        if ($Kind -eq 'config') {
            foreach ($pattern in $p.neverContent) { if ($text -match $pattern) { $why = 'credential content' } }
        }
        if ($why) {
            $entry.outcome = 'left out'
            $null = $leftOut.Add([ordered]@{ path = $Path; reason = $why })
        } else {
            $written = Write-Part $File $text $Kind
            $entry.outcome = 'ok'
            foreach ($key in $written.Keys) { $entry[$key] = $written[$key] }
        }
    } catch {
        $entry.outcome = 'error'
        $entry.error = $_.Exception.Message
    }
    $entry.seconds = [Math]::Round($clock.Elapsed.TotalSeconds, 2)
    $null = $items.Add($entry)
}

# What is never collected: listed when present, never opened.
foreach ($rule in $p.never) {
    if (Test-Path -LiteralPath $rule.path) { $null = $leftOut.Add([ordered]@{ path = $rule.path; reason = $rule.reason }) }
}

# The hns command's own script (kubectl_win/hns/script.py), unchanged: hns.json is what hns --from-file reads.
Save-Item 'hns' 'hns.json' {
__HNS_SCRIPT__
} 'json'

foreach ($component in $p.logs.PSObject.Properties) {
    $index = 0
    foreach ($path in @($component.Value)) {
        if (-not (Test-Path -LiteralPath $path -PathType Leaf)) { continue }
        $name = if ($index -eq 0) { "$($component.Name).log" } else { "$($component.Name).$index.log" }
        Save-File "log $($component.Name)" "logs/$name" $path 'log'
        $index += 1
    }
    if ($index -eq 0) {
        $null = $items.Add([ordered]@{ name = "log $($component.Name)"; outcome = 'absent'
                                       error = 'none of: ' + (@($component.Value) -join ', ') })
    }
}

foreach ($log in $p.eventLogs.PSObject.Properties) {
    $channel = $log.Value
    Save-Item "events $channel" "events/$($log.Name).log" {
        Get-WinEvent -LogName $channel -MaxEvents ([int]$p.eventsMax) -ErrorAction Stop | Sort-Object TimeCreated |
            ForEach-Object {
                $message = ("$($_.Message)" -replace '\s+', ' ').Trim()
                '{0} {1} {2} {3}: {4}' -f $_.TimeCreated.ToUniversalTime().ToString('o'), $_.LevelDisplayName,
                    $_.ProviderName, $_.Id, $message
            }
    } 'log' $channel
}

foreach ($config in $p.configs.PSObject.Properties) {
    foreach ($place in @($config.Value)) {
        if (-not (Test-Path -LiteralPath $place)) { continue }
        $files = if (Test-Path -LiteralPath $place -PathType Container) {
            @(Get-ChildItem -LiteralPath $place -File | ForEach-Object { $_.FullName })
        } else { @($place) }
        foreach ($file in $files) {
            $why = Test-Never $file
            if ($why) { $null = $leftOut.Add([ordered]@{ path = $file; reason = $why }); continue }
            Save-File "config $($config.Name)" "config/$($config.Name)/$(Split-Path -Leaf $file)" $file 'config'
        }
    }
}

Save-Item 'os' 'node/os.json' {
    $v = Get-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion'
    $os = Get-CimInstance -ClassName Win32_OperatingSystem
    [ordered]@{ ProductName = $v.ProductName; EditionID = $v.EditionID; DisplayVersion = $v.DisplayVersion
                CurrentBuild = $v.CurrentBuild; UBR = $v.UBR; LastBootUpTime = $os.LastBootUpTime.ToString('o')
                TotalVisibleMemoryKB = $os.TotalVisibleMemorySize; FreePhysicalMemoryKB = $os.FreePhysicalMemory
                TotalVirtualMemoryKB = $os.TotalVirtualMemorySize; FreeVirtualMemoryKB = $os.FreeVirtualMemory
    } | ConvertTo-Json -Depth 4
} 'json'
Save-Item 'hotfixes' 'node/hotfixes.txt' { Get-HotFix | Sort-Object InstalledOn | Format-Table -AutoSize | Out-String -Width 300 }
Save-Item 'disks' 'node/disks.json' {
    @(Get-CimInstance -ClassName Win32_LogicalDisk -Filter 'DriveType=3' |
        ForEach-Object { [ordered]@{ DeviceID = $_.DeviceID; Size = $_.Size; FreeSpace = $_.FreeSpace } }) |
        ConvertTo-Json -Depth 3
} 'json'
Save-Item 'page files' 'node/pagefiles.txt' { Get-CimInstance -ClassName Win32_PageFileUsage | Format-List | Out-String }
Save-Item 'services' 'node/services.json' {
    @(Get-Service -Name $p.services -ErrorAction SilentlyContinue | ForEach-Object {
        [ordered]@{ Name = $_.Name; Status = "$($_.Status)"; StartType = "$($_.StartType)" } }) | ConvertTo-Json -Depth 3
} 'json'
Save-Item 'sc queryex' 'node/sc-queryex.txt' { sc.exe queryex type= service state= all }
Save-Item 'excluded TCP ports' 'ports/excludedportrange-tcp.txt' { netsh.exe int ipv4 show excludedportrange protocol=tcp }
Save-Item 'excluded UDP ports' 'ports/excludedportrange-udp.txt' { netsh.exe int ipv4 show excludedportrange protocol=udp }
Save-Item 'dynamic TCP ports' 'ports/dynamicport-tcp.txt' { netsh.exe int ipv4 show dynamicport tcp }
Save-Item 'dynamic UDP ports' 'ports/dynamicport-udp.txt' { netsh.exe int ipv4 show dynamicport udp }
Save-Item 'ip configuration' 'network/ipconfig.txt' { ipconfig.exe /allcompartments /all }
Save-Item 'routes' 'network/routes.txt' { route.exe print }
Save-Item 'hnsdiag' 'network/hnsdiag.txt' {
    if (Get-Command hnsdiag.exe -ErrorAction SilentlyContinue) { hnsdiag.exe list all -d } else { 'hnsdiag.exe: not on this node' }
}
Save-Item 'vfp ports' 'network/vfp-ports.txt' {
    if (Get-Command vfpctrl.exe -ErrorAction SilentlyContinue) {
        $ports = vfpctrl.exe /list-vmswitch-port
        $ports
        $ports | Select-String -Pattern '^\s*Port name\s*:\s*(\S+)' | ForEach-Object {
            $port = $_.Matches[0].Groups[1].Value
            "== port $port"
            vfpctrl.exe /port $port /get-port-state
        }
    } else { 'vfpctrl.exe: not on this node' }
}
Save-Item 'containers' 'node/crictl.txt' {
    if (Get-Command crictl.exe -ErrorAction SilentlyContinue) { crictl.exe pods; crictl.exe ps -a } else { 'crictl.exe: not on this node' }
}

$manifest = [ordered]@{
    format = $p.format; startedAt = $started.ToUniversalTime().ToString('o')
    seconds = [Math]::Round(((Get-Date) - $started).TotalSeconds, 2); capBytes = $p.capBytes
    budgetSeconds = $p.budgetSeconds; items = $items; leftOut = $leftOut
}
[System.IO.File]::WriteAllText((Join-Path $out 'manifest.json'), ($manifest | ConvertTo-Json -Depth 6), $utf8)
try {
    $null = & tar.exe -czf $archive -C $out .
    if ($LASTEXITCODE -ne 0) { throw "tar.exe exited with $LASTEXITCODE" }
    $stdout = [Console]::OpenStandardOutput()
    $file = [System.IO.File]::OpenRead($archive)
    try { $file.CopyTo($stdout); $stdout.Flush() } finally { $file.Dispose() }
} finally {
    Remove-Item -LiteralPath $root -Recurse -Force -ErrorAction SilentlyContinue
}
""".replace("__HNS_SCRIPT__", HNS_SCRIPT.strip("\n"))


def parameters(log_bytes: int, cap_bytes: int, budget_seconds: float) -> dict[str, Any]:
    """What the script reads from stdin: numbers we checked and the lists of knowledge/collect.yaml."""
    from kubectl_win.knowledge import load

    if not (isinstance(log_bytes, int) and isinstance(cap_bytes, int) and log_bytes > 0 and cap_bytes > 0
            and budget_seconds > 0):
        raise ValueError("collect parameters must be positive numbers")
    data = load("collect")
    return {
        "format": FORMAT, "logBytes": log_bytes, "capBytes": cap_bytes, "budgetSeconds": round(budget_seconds, 1),
        "logs": data["logs"], "eventLogs": data["event_logs"], "eventsMax": int(data["events_max"]),
        "configs": data["configs"], "services": data["services"], "never": data["never"],
        "neverNames": data["never_names"], "neverContent": data["never_content"],
        "redact": load("redact")["patterns"],
    }


def stdin_line(params: dict[str, Any]) -> bytes:
    """One JSON line (the script reads exactly one line)."""
    return json.dumps(params, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


# The script is too long for a command line (32767 characters on Windows, less through proxies in front of
# API servers), so the command line holds this fixed loader: it reads the parameters (stdin line 1) and the
# script (line 2, base64 of UTF-8), and runs the script only if its SHA-256 is the one written into the loader.
LOADER = MARKER + """ (loader): runs the script on stdin line 2 only if its SHA-256 is __SHA256__
$ErrorActionPreference = 'Stop'
# Raw stdin, as the port-forward relays read it (-InputFormat None leaves it to the script).
$kwinIn = New-Object System.IO.StreamReader([Console]::OpenStandardInput(), (New-Object System.Text.UTF8Encoding $false))
$kwinParameters = $kwinIn.ReadLine()
$kwinScript = [Convert]::FromBase64String($kwinIn.ReadLine())
$kwinHash = [BitConverter]::ToString([Security.Cryptography.SHA256]::Create().ComputeHash($kwinScript)).Replace('-', '')
if ($kwinHash -ne '__SHA256__') {
    [Console]::Error.WriteLine('kubectl-win collect: the script received is not the one the command pins'); exit 9
}
. ([scriptblock]::Create((New-Object System.Text.UTF8Encoding $false).GetString($kwinScript)))
"""


def sha256() -> str:
    import hashlib

    return hashlib.sha256(SCRIPT.encode("utf-8")).hexdigest().upper()


def loader() -> str:
    return LOADER.replace("__SHA256__", sha256())


def command() -> list[str]:
    """The exec argv: the same for every node and every run."""
    encoded = base64.b64encode(loader().encode("utf-16-le")).decode("ascii")
    return ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
            "-InputFormat", "None", "-EncodedCommand", encoded]


def stdin(params: dict[str, Any]) -> bytes:
    """Line 1 the parameters (JSON), line 2 the script (base64 of its UTF-8)."""
    return stdin_line(params) + base64.b64encode(SCRIPT.encode("utf-8")) + b"\n"


def show(params: dict[str, Any]) -> str:
    """--show-script: the script as it runs, how it travels, and the stdin line it reads."""
    head = ("# What `kubectl win collect` runs on each node, as NT AUTHORITY\\SYSTEM in a HostProcess pod.\n"
            "# It travels as: powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -InputFormat None\n"
            "#   -EncodedCommand <this loader, UTF-16LE base64>:\n"
            + "".join(f"#     {line}\n" for line in loader().splitlines())
            + "# stdin line 2 is the script below, base64 of its UTF-8; stdin line 1 its parameters, read as data:\n"
            + "#     " + stdin_line(params).decode("ascii") + "\n")
    return head + SCRIPT
