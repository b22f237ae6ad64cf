"""Reading Kubernetes objects from files, directories and stdin, with line numbers, and finding the pod
spec(s) inside any workload kind. Shared by explain, doctor and scaffold; one module per job:

- inputs: capped input (files, directories, stdin; size limits, encodings, binary refused)
- yamlsafe: YAML and JSON parsed safely (alias bombs, nesting)
- reader: the objects of a source, each with where it came from
- lines: line numbers, looked up only when a finding needs one
- objects: pod specs, containers and paths inside an object

Line numbers cost nothing until asked for: YAML is composed into a node tree by libyaml and constructed
once; a finding's line is looked up in that tree by path only when a finding needs it.
"""
