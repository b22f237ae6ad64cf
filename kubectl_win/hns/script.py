"""The PowerShell the HostProcess pod runs: print one JSON document with the node's HNS state.

The script is a constant. Nothing a user types (node, namespace, image) is ever put into it, and it
reaches PowerShell as -EncodedCommand, so no quoting rules apply. It writes the keys hns.model reads:
V1 objects from the inbox HostNetworkingService cmdlets first, then V2 load balancers when the node
carries hns.v2.psm1 (AKS keeps it in C:\\k\\debug; importing it replaces the Get-Hns* cmdlets, hence
the order), the HNS version through vmcompute.dll, the dynamic port range, recent HNS events and the
tail of kube-proxy's log. Every part is optional: a failing cmdlet leaves its key out.
"""

from __future__ import annotations

import base64

JSON_DEPTH = 20  # ConvertTo-Json's default of 2 flattens nested policies to "System.Object[]"

SCRIPT = r"""
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
function Get-Part([scriptblock]$Block) { try { & $Block } catch { $null } }
$dump = [ordered]@{}
$dump.networks = Get-Part { Get-HnsNetwork }
$dump.endpoints = Get-Part { Get-HnsEndpoint }
$dump.policyLists = Get-Part { Get-HnsPolicyList }
$dump.namespaces = Get-Part { Get-HnsNamespace }
$dump.version = Get-Part {
    Add-Type -Namespace KubectlWin -Name Hns -MemberDefinition @'
[DllImport("vmcompute.dll")]
public static extern void HNSCall([MarshalAs(UnmanagedType.LPWStr)] string method,
    [MarshalAs(UnmanagedType.LPWStr)] string path, [MarshalAs(UnmanagedType.LPWStr)] string request,
    [MarshalAs(UnmanagedType.LPWStr)] out string response);
'@
    $answer = $null
    [KubectlWin.Hns]::HNSCall('GET', '/globals/version', '', [ref]$answer)
    ($answer | ConvertFrom-Json).Output
}
$dump.dynamicPortRange = Get-Part {
    $tcp = Get-NetTCPSetting -SettingName Internet
    [ordered]@{ StartPort = $tcp.DynamicPortRangeStartPort; NumberOfPorts = $tcp.DynamicPortRangeNumberOfPorts }
}
$dump.events = Get-Part {
    $since = (Get-Date).AddDays(-1)
    $scm = @{ LogName = 'System'; ProviderName = 'Service Control Manager'; StartTime = $since }
    $crashes = Get-Part {
        Get-WinEvent -FilterHashtable $scm | Where-Object { $_.Message -match 'Host Network Service' } }
    $hns = @{ LogName = 'Microsoft-Windows-Host-Network-Service-Admin'; StartTime = $since }
    $admin = Get-Part { Get-WinEvent -FilterHashtable $hns -MaxEvents 200 }
    @($crashes) + @($admin) | Where-Object { $_ } | ForEach-Object {
        [ordered]@{ TimeCreated = $_.TimeCreated.ToUniversalTime().ToString('o'); ProviderName = $_.ProviderName
                    Id = $_.Id; LevelDisplayName = $_.LevelDisplayName; Message = $_.Message } }
}
$dump.kubeProxyLog = Get-Part {
    $paths = 'C:\var\log\kube-proxy\kube-proxy.log', 'C:\var\log\kube-proxy\kube-proxy.err.log',
             'C:\k\kubeproxy.err.log', 'C:\k\kubeproxy.log', 'C:\var\lib\rancher\rke2\agent\logs\kube-proxy.log'
    $found = $paths | Where-Object { Test-Path $_ } | Select-Object -First 1
    if ($found) { (Get-Content -Path $found -Tail 2000) -join "`n" }
}
foreach ($module in 'C:\k\debug\hns.v2.psm1', 'C:\k\hns.v2.psm1') {
    if (Test-Path $module) {
        $dump.loadBalancers = Get-Part {
            Import-Module $module -Force -DisableNameChecking -WarningAction SilentlyContinue
            Get-HnsLoadBalancer -Version 2
        }
        break
    }
}
$dump | ConvertTo-Json -Depth __DEPTH__ -Compress
""".replace("__DEPTH__", str(JSON_DEPTH))


def command() -> list[str]:
    """The exec argv: the script, encoded as PowerShell's -EncodedCommand wants (UTF-16LE, base64)."""
    encoded = base64.b64encode(SCRIPT.encode("utf-16-le")).decode("ascii")
    return ["powershell.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
            "-EncodedCommand", encoded]


def show() -> str:
    """--show-script: the script, and how it travels."""
    return ("# What `kubectl win hns NODE` runs on the node, as NT AUTHORITY\\SYSTEM in a HostProcess pod.\n"
            "# It travels as: powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass\n"
            "#   -EncodedCommand <this script, UTF-16LE base64>\n" + SCRIPT.lstrip("\n"))
