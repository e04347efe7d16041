-- Run once by the postgres image on an empty volume: one database per service.
CREATE DATABASE prefect;
CREATE DATABASE mlflow;
CREATE DATABASE mlflow_auth;  -- MLflow's basic-auth users and permissions
