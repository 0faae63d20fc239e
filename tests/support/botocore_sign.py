#!/usr/bin/python3
"""The requests botocore (Debian's python3-botocore) sends for S3 reads, as
the reference that tdstudio's own SigV4 signer is checked against
(tests/core/tst_s3.cpp).

Each case goes through a real botocore S3 client (its endpoint and
addressing rules, its key encoding, its S3SigV4Auth) with the clock fixed;
the prepared request is caught before it is sent.

usage: botocore_sign.py CASES.json > requests.json
  cases: [{"operation": "get_object" | "list_objects_v2", "bucket", "key",
           "range", "prefix", "delimiter", "token", "access_key",
           "secret_key", "session_token", "region", "endpoint",
           "addressing": "path" | "virtual", "time": "YYYYmmddTHHMMSSZ"}]
  out:   [{"url", "headers": {name: value}}]
"""
import datetime
import json
import sys

import botocore.auth
import botocore.session
from botocore.config import Config


class Caught(Exception):
    def __init__(self, request):
        super().__init__("caught")
        self.request = request


def catch(request, **kwargs):
    raise Caught(request)


def at_time(stamp):
    fixed = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")

    class Fixed(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return fixed

    return Fixed


def prepared(case):
    botocore.auth.datetime.datetime = at_time(case["time"])
    session = botocore.session.get_session()
    client = session.create_client(
        "s3",
        region_name=case["region"],
        endpoint_url=case.get("endpoint") or None,
        aws_access_key_id=case["access_key"],
        aws_secret_access_key=case["secret_key"],
        aws_session_token=case.get("session_token") or None,
        config=Config(signature_version="s3v4",
                      s3={"addressing_style": case["addressing"]},
                      retries={"max_attempts": 1}),
    )
    client.meta.events.register_first("before-send.s3", catch)
    try:
        if case["operation"] == "get_object":
            args = {"Bucket": case["bucket"], "Key": case["key"]}
            if case.get("range"):
                args["Range"] = case["range"]
            client.get_object(**args)
        else:
            args = {"Bucket": case["bucket"]}
            for name, field in [("Prefix", "prefix"), ("Delimiter", "delimiter"),
                                ("ContinuationToken", "token")]:
                if case.get(field):
                    args[name] = case[field]
            client.list_objects_v2(**args)
    except Caught as caught:
        r = caught.request
        return {"url": r.url,
                "headers": {k: (v.decode() if isinstance(v, bytes) else v)
                            for k, v in r.headers.items()}}
    raise RuntimeError("botocore sent nothing")


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps([prepared(case) for case in json.load(f)]))


if __name__ == "__main__":
    main()
