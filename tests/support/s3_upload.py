#!/usr/bin/python3
"""Puts a file, or every file under a folder, into an S3 bucket with
botocore (Debian's python3-botocore), as s3rver's own account (S3RVER).

usage: s3_upload.py ENDPOINT BUCKET KEY PATH
  PATH a file: put at KEY; a folder: each file at KEY/<its path in PATH>
"""
import os
import sys

import botocore.session
from botocore.config import Config


def main():
    endpoint, bucket, key, path = sys.argv[1:5]
    client = botocore.session.get_session().create_client(
        "s3", region_name="us-east-1", endpoint_url=endpoint,
        aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    if os.path.isfile(path):
        files = [(path, key)]
    else:
        files = []
        for folder, _, names in os.walk(path):
            for name in names:
                full = os.path.join(folder, name)
                files.append((full, key.rstrip("/") + "/" + os.path.relpath(full, path)))
    for full, name in files:
        with open(full, "rb") as f:
            client.put_object(Bucket=bucket, Key=name, Body=f)


if __name__ == "__main__":
    main()
