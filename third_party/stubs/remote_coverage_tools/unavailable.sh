#!/bin/sh
echo "remote_coverage_tools: not available offline (qptwin does not use bazel coverage)" >&2
exit 1
