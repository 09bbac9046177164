"""Loads fixture tables into an S3 server (moto, on loopback) for the HTTP tests.

usage: s3_load.py ENDPOINT BUCKET TABLES_DIR NAME...
Creates BUCKET with a CORS rule browsers need (ranged reads, ETag / Content-Range exposed)
and uploads TABLES_DIR/NAME/** to s3://BUCKET/NAME/**. Credentials from the AWS_* variables.
"""
import os
import sys

import boto3
from botocore.config import Config


def main():
    endpoint, bucket, root, *names = sys.argv[1:]
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3}),
    )
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_cors(
        Bucket=bucket,
        CORSConfiguration={
            "CORSRules": [
                {
                    "AllowedOrigins": ["*"],
                    "AllowedMethods": ["GET", "HEAD", "PUT", "DELETE"],
                    "AllowedHeaders": ["*"],
                    "ExposeHeaders": ["ETag", "Content-Range", "Content-Length", "Last-Modified"],
                }
            ]
        },
    )
    count = 0
    for name in names:
        base = os.path.join(root, name)
        for dirpath, _dirs, files in os.walk(base):
            for f in files:
                path = os.path.join(dirpath, f)
                key = name + "/" + os.path.relpath(path, base).replace(os.sep, "/")
                if key.endswith("hudi-edge-manifest.json"):
                    continue  # S3 lists natively: no manifest
                s3.upload_file(path, bucket, key)
                count += 1
    print(f"uploaded {count} objects to s3://{bucket}/")


if __name__ == "__main__":
    main()
